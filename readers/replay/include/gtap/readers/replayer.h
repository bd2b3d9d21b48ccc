// Runs a capture's replay stream again on Level Zero and HSA (docs/replay.md,
// Replay): the records one at a time in seq order on one thread, with
// objects, addresses and payloads translated to this run's. Each runtime is
// opened only when the stream holds its records. Everything that can be
// checked before device work (a cut stream, unsupported records, missing or
// changed external files, devices and agents, substituted modules and code
// objects) is checked in prepare(), the part that needs no runtime in
// validate(); run() can then be repeated (bench), each run creating and
// destroying everything it uses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"

namespace gtap::readers {

// A replay that cannot go on. The message names the file, the record (seq,
// op) and what was expected.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest module binary --substitute takes: 1 GiB, the most one capture
// chunk holds, so no capture can hold a larger module either.
inline constexpr uint64_t kMaxSubstituteBytes = uint64_t{1} << 30;

// Checks, without reading it, that `path` can be a module binary: a regular
// file of at most kMaxSubstituteBytes. Throws ReplayError naming `what` and
// the path (a device, FIFO, socket or directory is never opened for reading;
// a FIFO is opened without waiting for a writer).
void checkSubstituteFile(const std::string& path, const std::string& what);

struct ModuleSubstitution {
  // A module or HSA code object id (as dump shows), a kernel name (HSA: with
  // or without .kd), or "all".
  std::string selector;
  std::string path;  // the replacement binary
};

struct ReplayOptions {
  bool verify = false;  // compare read-backs with what the program saw
  // Path prefix rewrites for external files, tried in order: {OLD, NEW}.
  std::vector<std::pair<std::string, std::string>> remaps;
  std::vector<ModuleSubstitution> substitutions;
  // Scopes that must be in the stream (bench --scope).
  std::vector<std::string> requiredScopes;
  // The HSA runtime to open (a path or a file name dlopen searches); empty:
  // libhsa-runtime64.so.1.
  std::string hsaRuntime;
  // HSA: the GPU agent (counted from 0 in hsa_iterate_agents order) the first
  // captured GPU agent replays on; unset: each captured GPU agent on the next
  // unused one with the same ISA.
  std::optional<uint32_t> device;
  // HSA: how long a signal wait (or a full queue) may take before the replay
  // gives up, naming what it waited for.
  uint64_t waitTimeoutNs = 60'000'000'000;
};

struct ReadBackMismatch {
  uint64_t seq = 0;          // of the readBack record
  uint64_t copySeq = 0;      // 0 for an HSA allocation's read-back
  uint64_t firstOffset = 0;  // first differing byte, from the read-back's start
  uint64_t differing = 0;    // bytes that differ
  uint64_t size = 0;
  uint64_t allocation = 0;   // HSA: the allocation or locked range read back (0: a copy's destination)
  uint64_t offset = 0;       // of the read-back's first byte in that allocation or destination
};

struct ReplayResult {
  uint64_t records = 0;   // performed
  uint64_t kernels = 0;   // kernel launches appended, HSA dispatch packets written
  uint64_t readBacks = 0; // compared (verify)
  std::vector<ReadBackMismatch> mismatches;
};

struct ReplayCallbacks {
  // Called when a scopeBegin / scopeEnd record is performed.
  std::function<void(const ReplayRecord&)> scopeBegin;
  std::function<void(const ReplayRecord&)> scopeEnd;
};

class Replayer {
 public:
  Replayer(const Capture& capture, const ReplayStream& stream, ReplayOptions options);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  // What needs no runtime: refuses a cut stream, one with unsupported records
  // or without a required scope, and resolves every payload (blobs
  // decompressed, external files checked and read). Throws ReplayError.
  void validate();
  // validate() (when not called yet), then opens the runtimes the stream
  // needs (the Level Zero loader, the HSA runtime, which it initialises),
  // maps the captured devices and agents and checks substitutions. Throws
  // ReplayError. Call once, before run().
  void prepare();
  // What prepare() found worth saying that does not stop a replay (a device
  // whose name differs from the captured one).
  const std::vector<std::string>& warnings() const;

  // One full replay. Everything it created is destroyed before it returns,
  // also when it throws ReplayError.
  ReplayResult run(const ReplayCallbacks& callbacks = {});

  // Inside a callback: waits until all work submitted so far has finished
  // (every live queue and immediate command list, every HSA queue and copy).
  void synchronizeAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtap::readers
