// One replay: performs every record in seq order, keeping the objects it made
// (by the capture's ids), the live captured allocations and the staging
// buffers of copies from or to ordinary host memory. Its destructor destroys
// whatever is still alive, so a failed run leaves nothing behind.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "address_map.h"
#include "setup.h"

namespace gtap::replay {

class Session {
 public:
  // Counts what it performs into `result`.
  Session(const ReplaySetup& setup, readers::ReplayResult& result);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Performs one Level Zero record (or host data or a read-back of Level
  // Zero memory or copies); `index` is its place in the stream.
  void perform(const readers::ReplayRecord& r, size_t index);
  // Waits for everything submitted so far: every live queue and immediate list.
  void synchronizeAll();

 private:
  enum class Kind { context, allocation, module, kernel, queue, list, pool, event, fence };
  struct Live {
    Kind kind;
    void* handle = nullptr;
    uint64_t context = 0;      // the id of the context it was made in
    ze_driver_handle_t driver = nullptr;  // contexts
    bool immediate = false;    // lists
    uint64_t capturedAddress = 0;  // allocations
    uint64_t size = 0;
    uint64_t memoryKind = 0;   // allocations: 1 host, 2 device, 3 shared
  };
  // The replay's own buffers for a copy whose source or destination was
  // ordinary host memory in the program.
  struct CopyBuffers {
    std::vector<uint8_t> source;       // filled from the payload or hostData target 1
    std::vector<uint8_t> destination;  // what the device wrote, for read-backs
    uint8_t* replayDestination = nullptr;  // where read-backs are compared
    uint64_t destinationSize = 0;          // bytes there the copy wrote
  };
  // An event of gtap's own per context, to wait for immediate lists.
  struct SyncEvent {
    ze_event_pool_handle_t pool = nullptr;
    ze_event_handle_t event = nullptr;
  };

  void performCreate(const readers::ReplayRecord& r, size_t index);
  void performAppend(const readers::ReplayRecord& r, size_t index);
  void performHostData(const readers::ReplayRecord& r, size_t index);
  void performReadBack(const readers::ReplayRecord& r, size_t index);
  void cleanup() noexcept;

  template <class Handle>
  Handle get(const readers::ReplayRecord& r, uint64_t id, Kind kind, const char* role, bool optional = false);
  ze_device_handle_t device(const readers::ReplayRecord& r, uint64_t id, bool optional = false);
  std::vector<ze_event_handle_t> events(const readers::ReplayRecord& r, capnp::List<uint64_t>::Reader ids);
  uint8_t* translate(const readers::ReplayRecord& r, uint64_t address, uint64_t size, const char* role);
  void check(const readers::ReplayRecord& r, ze_result_t result, const char* function);
  void destroy(uint64_t id);
  void synchronizeList(uint64_t listId, uint64_t timeoutNs);
  static const char* kindName(Kind kind);

  const ReplaySetup& setup_;
  const ZeFunctions& ze_;
  std::map<uint64_t, Live> objects_;
  AddressMap addresses_;
  uint64_t liveAllocationBytes_ = 0;  // sizes of the live captured allocations, summed
  std::map<uint64_t, CopyBuffers> copies_;  // by the copy record's seq
  std::map<uint64_t, SyncEvent> syncEvents_;  // by context id
  readers::ReplayResult& result_;
};

}  // namespace gtap::replay
