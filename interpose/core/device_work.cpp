#include "device_work.h"

#include <new>

#include "chunk_producer.h"
#include "thread_records.h"

namespace gtap::core::devicework {

using threadrecords::Channel;

Header* begin(uint32_t stackCount, uint32_t bindingCount, uint32_t waitCount, uint32_t signalCount,
              uint32_t argumentBytes, uint32_t noteBytes, uint32_t counterCount, uint32_t counterRawBytes) {
  uint64_t size = sizeof(Header) + 8ull * stackCount + sizeof(profile::OpRecord::Binding) * bindingCount +
                  sizeof(profile::OpRecord::SemaphoreValue) * (uint64_t{waitCount} + signalCount) +
                  8ull * counterCount + argumentBytes + noteBytes + counterRawBytes;
  if (size > (uint64_t{1} << 30) || stackCount > 0xffff || noteBytes > 0xffff) return nullptr;
  void* at = threadrecords::begin(Channel::deviceWork, size);
  if (!at) return nullptr;
  auto* h = new (at) Header();
  h->size = static_cast<uint32_t>((size + 7) & ~uint64_t{7});
  h->stackCount = static_cast<uint16_t>(stackCount);
  h->bindingCount = bindingCount;
  h->waitCount = waitCount;
  h->signalCount = signalCount;
  h->argumentBytes = argumentBytes;
  h->noteBytes = static_cast<uint16_t>(noteBytes);
  h->counterCount = counterCount;
  h->counterRawBytes = counterRawBytes;
  return h;
}

void commit(Header* record) { threadrecords::commit(Channel::deviceWork, record); }
void commitPending(Header* record) { threadrecords::commitPending(Channel::deviceWork, record); }
void settle(Header* record, bool keep) { threadrecords::settle(record, keep); }

namespace {

void produceChunks(ChunkSink& sink, bool) {
  // Writer thread only; kept across flushes so a flush allocates nothing,
  // and never destroyed (the last flush may come after static destructors).
  static auto& published = *new std::vector<const void*>;
  static auto& records = *new std::vector<const Header*>;
  static auto& done = *new std::vector<void*>;
  published.clear();
  records.clear();
  threadrecords::drain(Channel::deviceWork, published, done);
  for (const void* r : published) records.push_back(static_cast<const Header*>(r));
  profile::writeDeviceWork(sink, records);
  threadrecords::release(done);
}

// After the front ends' producers (constructor 103): the objects these records
// name are written first.
__attribute__((constructor(104))) void registerDeviceWork() { registerChunkProducer(&produceChunks); }

}  // namespace

}  // namespace gtap::core::devicework
