/* A zstd of the program's own: libzstd.so.1 with the library's names and a
   behaviour of its own (a version no zstd has, and a compressor that marks
   its output), so a test can tell whose zstd a call reached. gtap's own zstd
   is linked into libgtap.so, hidden: the program's calls must reach this one,
   and gtap's must not. */
#include <stddef.h>
#include <string.h>

#define OWN_ZSTD_VERSION 10999u

unsigned ZSTD_versionNumber(void) { return OWN_ZSTD_VERSION; }

size_t ZSTD_compressBound(size_t srcSize) { return srcSize + 8; }

unsigned ZSTD_isError(size_t code) { return code > (size_t)-64; }

/* "OWNZSTD!" then the bytes as they are. */
size_t ZSTD_compress(void* dst, size_t dstCapacity, const void* src, size_t srcSize, int level) {
  (void)level;
  if (dstCapacity < srcSize + 8) return (size_t)-70;
  memcpy(dst, "OWNZSTD!", 8);
  memcpy((char*)dst + 8, src, srcSize);
  return srcSize + 8;
}
