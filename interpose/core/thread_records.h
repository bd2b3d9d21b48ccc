// Per-thread buffers of records, so that recording on the program's thread
// takes no lock and allocates nothing: the thread writes a record into a
// block it owns and publishes it with one release store; the writer thread
// reads the published records from where they lie at each flush. A block
// comes from a pool once per kBlockBytes of records.
//
// Each channel is a separate set of buffers with its own reader: device work
// (HSA packets, IREE HAL operations, Level Zero launches with stacks),
// replay records and the program's named ranges (gtap_range_push / pop).
#pragma once

#include <cstdint>
#include <vector>

namespace gtap::core::threadrecords {

enum class Channel : uint8_t { deviceWork = 0, replay = 1, ranges = 2 };
inline constexpr unsigned kChannels = 3;

// Space for a record of `bytes` (rounded up to a multiple of 8) in the calling
// thread's buffer of `channel`, 8-aligned; null when no buffer can be had
// (recording stopped). The caller fills it in and calls commit before it
// begins another record on this channel.
void* begin(Channel channel, uint64_t bytes);
// Publishes the record begin returned.
void commit(Channel channel, void* record);
// For a record whose call has not returned yet (other records may come on
// the thread before it does): holds its place, and the reader reads no
// further on this thread until settle() says whether it stands.
void commitPending(Channel channel, void* record);
void settle(void* record, bool keep);

// Writer thread: every record of `channel` published since the last call,
// appended to `out` where it lies, and the blocks read to their end to
// `done`: the records stay valid until release(done) gives those blocks back.
void drain(Channel channel, std::vector<const void*>& out, std::vector<void*>& done);
void release(std::vector<void*>& done);

}  // namespace gtap::core::threadrecords
