/* The bundle's bin/gtap (gtap bundle): a statically linked program, so it
 * starts on any x86-64 Linux, whatever C library the image has or lacks.
 * It checks that the system has the GNU C library the bundle's gtap was
 * built for (the version `gtap bundle` wrote in lib/gtap/needs-glibc) and
 * then runs the bundle's gtap, bin/gtap.bin, with the same arguments. Where
 * the C library is missing (an image built on musl, such as Alpine, or none
 * at all) or older than needed, it says which version is needed instead of
 * leaving the loader's "not found". Where it cannot tell the version, the
 * loader has the last word, as without it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The x86-64 ABI's program interpreter: every glibc system has it. */
static const char kLoader[] = "/lib64/ld-linux-x86-64.so.2";

/* Where distributions keep libc.so.6, in the loader's usual order. */
static const char* const kLibcPlaces[] = {
    "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6",
    "/usr/lib64/libc.so.6",            "/lib/libc.so.6",                      "/usr/lib/libc.so.6",
};

/* "2.36" into 2 and 36; 0 when it is not such a version. */
static int parseVersion(const char* text, int* major, int* minor) {
  char* end = NULL;
  long a = strtol(text, &end, 10);
  if (end == text || *end != '.') return 0;
  const char* second = end + 1;
  long b = strtol(second, &end, 10);
  if (end == second || a < 0 || b < 0 || a > 1000 || b > 100000) return 0;
  *major = (int)a;
  *minor = (int)b;
  return 1;
}

/* The version glibc's libc.so.6 at `path` states in its banner ("... stable
 * release version 2.36."); 0 when the file is not there or says none. */
static int libcVersion(const char* path, int* major, int* minor) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int found = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (1 << 30)) {
    void* bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes != MAP_FAILED) {
      static const char kMark[] = "release version ";
      const char* at = memmem(bytes, (size_t)st.st_size, kMark, sizeof kMark - 1);
      if (at) {
        char text[32] = {0};
        size_t left = (size_t)((const char*)bytes + st.st_size - (at + sizeof kMark - 1));
        memcpy(text, at + sizeof kMark - 1, left < sizeof text - 1 ? left : sizeof text - 1);
        found = parseVersion(text, major, minor);
      }
      munmap(bytes, (size_t)st.st_size);
    }
  }
  close(fd);
  return found;
}

/* The folder this program is in, with a slash at the end, into `dir`. */
static int ownFolder(const char* argv0, char* dir, size_t size) {
  ssize_t n = readlink("/proc/self/exe", dir, size - 1);
  if (n > 0) {
    dir[n] = '\0';
  } else if (argv0 && strchr(argv0, '/') && strlen(argv0) < size) {
    /* Without /proc (a bare chroot): the path it was started by. */
    strcpy(dir, argv0);
  } else {
    return 0;
  }
  char* slash = strrchr(dir, '/');
  if (!slash) return 0;
  slash[1] = '\0';
  return 1;
}

int main(int argc, char** argv) {
  (void)argc;
  char dir[PATH_MAX];
  if (!ownFolder(argv[0], dir, sizeof dir)) {
    fprintf(stderr, "gtap: cannot tell where this bundle is (no /proc/self/exe, and started without a path)\n");
    return 127;
  }
  char real[PATH_MAX + 16], needsPath[PATH_MAX + 32];
  snprintf(real, sizeof real, "%sgtap.bin", dir);
  snprintf(needsPath, sizeof needsPath, "%s" GTAP_RELATIVE_LIBDIR "/needs-glibc", dir);
  int needMajor = 0, needMinor = 0;
  char needs[64] = {0};
  FILE* f = fopen(needsPath, "re");
  if (f) {
    if (fgets(needs, sizeof needs, f)) needs[strcspn(needs, "\n")] = '\0';
    fclose(f);
  }
  if (parseVersion(needs, &needMajor, &needMinor)) {
    if (access(kLoader, F_OK) != 0) {
      fprintf(stderr,
              "gtap: this system has no GNU C library (%s is missing: an image built on another C library, such as "
              "musl on Alpine, or on none); this gtap bundle needs glibc %d.%d or newer\n",
              kLoader, needMajor, needMinor);
      return 127;
    }
    for (size_t i = 0; i < sizeof kLibcPlaces / sizeof kLibcPlaces[0]; ++i) {
      int major, minor;
      if (!libcVersion(kLibcPlaces[i], &major, &minor)) continue;
      if (major < needMajor || (major == needMajor && minor < needMinor)) {
        fprintf(stderr,
                "gtap: this system's C library is glibc %d.%d (%s); this gtap bundle needs glibc %d.%d or newer: "
                "make the bundle on a system no newer than the image\n",
                major, minor, kLibcPlaces[i], needMajor, needMinor);
        return 127;
      }
      break;
    }
  }
  execv(real, argv);
  fprintf(stderr, "gtap: cannot run %s: %s\n", real, strerror(errno));
  return 127;
}
