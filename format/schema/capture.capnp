# The capture file's records. Each chunk of a .gtap file holds one message whose
# root type is given by the chunk kind (see ChunkKind). Evolve by adding fields
# and enumerants only; never renumber or change a field's type.
@0xc6cf79d07fa7a4db;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("gtap::schema");

# Chunk kinds as stored (UInt16) in the chunk header. Readers skip kinds they do
# not know, with a note.
enum ChunkKind {
  invalid @0;
  fileInfo @1;     # root FileInfo; first chunk of every file
  definitions @2;  # root Definitions
  apiEvents @3;    # root ApiEvents
  blob @4;         # root Blob
  trailer @5;      # root Trailer; last chunk of a cleanly closed file
  devices @6;      # root Devices: GPU devices and clock correlation samples
  objects @7;      # root Objects: runtime objects (modules, kernels, queues, lists)
  deviceOps @8;    # root DeviceOps: kernels, copies, fills, barriers as executed
  memoryOps @9;    # root MemoryOps: allocations and frees
  stacks @10;      # root Stacks: CPU call stacks and the host modules they point into
  replay @11;      # root Replay: what to run again (docs/replay.md)
  instructionSamples @12;  # root InstructionSamples: where inside kernels the device spent time
  counters @13;    # root Counters: the counter sets device ops carry values of (format 1.7)
  deviceMetrics @14;  # root DeviceMetrics: device metrics sampled over time (format 1.7)
  phases @15;      # root Phases: when recording was paused and resumed (format 1.8)
  ranges @16;      # root Ranges: named ranges the program pushed and popped (format 1.9)
}

struct KeyValue {
  key @0 :Text;
  value @1 :Text;
}

struct FileInfo {
  formatMajor @0 :UInt16;
  formatMinor @1 :UInt16;
  producer @2 :Text;            # e.g. "gtap 0.1.0"
  pid @3 :UInt32;
  ppid @4 :UInt32;
  forkedFromPid @5 :UInt32;     # non-zero in a child whose parent was captured
  hostname @6 :Text;
  executable @7 :Text;
  arguments @8 :List(Text);
  rank @9 :Int32 = -1;          # MPI rank when a launcher told us, else -1
  worldSize @10 :Int32 = -1;
  startRealtimeNs @11 :Int64;   # CLOCK_REALTIME at session start
  startHostNs @12 :Int64;       # the host clock (CLOCK_MONOTONIC) at that instant
  mode @13 :Text;               # what is recorded, as configured
  config @14 :List(KeyValue);   # the GTAP_* settings in force
}

enum Api {
  unknown @0;
  levelZero @1;        # ze*
  levelZeroTools @2;   # zet*
  levelZeroSysman @3;  # zes*
  hsa @4;
  ireeHal @5;
}

struct FunctionDef {
  id @0 :UInt32;       # as used in ApiEvents.functions
  api @1 :Api;
  name @2 :Text;
  unrecorded @3 :Bool; # (1.1) the program could call it, gtap passed it through
                       # without recording it (no wrapper); it has no events
}

struct ThreadDef {
  id @0 :UInt32;       # as used in ApiEvents.thread; dense, per file
  osTid @1 :UInt32;
  name @2 :Text;
  firstHostNs @3 :Int64;
}

struct StringDef {
  id @0 :UInt32;
  text @1 :Text;
}

# Definitions are written before the first record that refers to them.
struct Definitions {
  functions @0 :List(FunctionDef);
  threads @1 :List(ThreadDef);
  strings @2 :List(StringDef);
}

enum EventKind {
  callBegin @0;  # written before the real call: a call that never returns still shows
  callEnd @1;    # value holds the call's result code
  call @2;       # (1.3) a whole call: begin, duration, result
}

# A run of one thread's events in the order the thread produced them. The
# events are a byte stream in one of two layouts
# (format/include/gtap/format/api_events.h encodes and decodes both):
#
# callEvents false (formats 1.0-1.2): calls are begin/end pairs matched per
# thread (innermost open begin first), so calls cut by a crash stay visible
# as begins. Each event:
#   varint (function << 1 | kind)       kind: 0 callBegin, 1 callEnd
#   varint time delta in ns from the previous event of the thread (>= 0)
#   callEnd only: zigzag varint result code
#
# callEvents true (1.3 on): one event per call, in the order the calls began;
# a call that had not returned when the file was closed (the program crashed
# or exited inside it) is a begin alone. The bytes are four columns, so the
# compressor meets long runs rather than one short match per call:
#   varint size of column 1, varint size of column 2, varint size of column 3
#   column 1, per event: varint (function << 3 | flags)
#                        flags: 1 returned, 2 result follows, 4 depth follows
#   column 2, per event: varint begin time delta in ns from the previous
#                        event's begin (>= 0)
#   column 3, per returned event: varint duration in ns
#   column 4 (the rest), per event with them, in order: varint depth (calls
#                        of the thread open around it), zigzag varint result
# (a call without them has depth 0 and result 0).
#
# Either way an event's per-thread index (firstIndex + its position) is what
# device work and allocations name as their call (callIndex).
struct ApiEvents {
  thread @0 :UInt32;
  firstIndex @1 :UInt64;    # per-thread index of the first event here
  baseHostNs @2 :Int64;     # time the first delta starts from
  count @3 :UInt32;         # events in `encoded`
  encoded @4 :Data;
  callEvents @5 :Bool;      # (1.3) the one-event-per-call layout
}

# Content-addressed bytes, stored once per file. Large contents are split into
# parts that share a hash and carry their offset.
struct Blob {
  hashLow @0 :UInt64;    # XXH3-128 of the whole content
  hashHigh @1 :UInt64;
  totalSize @2 :UInt64;
  offset @3 :UInt64;
  data @4 :Data;
}

struct ChunkRef {
  offset @0 :UInt64;
  kind @1 :UInt16;
  storedSize @2 :UInt32;
  firstHostNs @3 :Int64;
  lastHostNs @4 :Int64;
}

struct Trailer {
  chunks @0 :List(ChunkRef);
  eventsWritten @1 :UInt64;
  eventsDropped @2 :UInt64;
  endHostNs @3 :Int64;
  closeReason @4 :Text;   # "exit", "signal 11", ...
}

# --- GPU devices and their clocks -------------------------------------------

struct DeviceDef {
  id @0 :UInt32;                 # gtap's id, per file
  api @1 :Api;
  handle @2 :UInt64;
  name @3 :Text;
  vendorId @4 :UInt32;
  deviceId @5 :UInt32;
  uuid @6 :Data;
  timerFrequencyHz @7 :UInt64;   # device ticks per second
  kernelTimestampBits @8 :UInt8; # valid bits of kernel timestamps (they wrap)
  globalTimestampBits @9 :UInt8; # valid bits of global timestamps
  # (1.7) The device's peaks, from its properties, for rooflines; 0 when unknown.
  peakFlopsPerSecond @10 :Float64;  # single precision, fused multiply-add counted as two
  peakBytesPerSecond @11 :Float64;  # device memory bandwidth
}

# A pair of clock readings taken together: converts device ticks to the host
# clock domain. Readers pick the sample nearest in time.
struct ClockSample {
  device @0 :UInt32;
  hostNs @1 :Int64;
  deviceTicks @2 :UInt64;        # global timestamp, globalTimestampBits wide
}

struct Devices {
  devices @0 :List(DeviceDef);
  samples @1 :List(ClockSample);
}

# --- Runtime objects ---------------------------------------------------------

enum ObjectKind {
  unknown @0;
  context @1;
  module @2;
  kernel @3;
  commandQueue @4;
  commandList @5;
  immediateCommandList @6;
  eventPool @7;
  executable @8;          # HSA executable (its code objects are modules, parent = executable);
                          # IREE HAL executable (its exports are kernels, parent = executable)
}

struct ObjectDef {
  id @0 :UInt64;          # gtap's id, unique per file (handles are reused after destroy)
  kind @1 :ObjectKind;
  handle @2 :UInt64;
  device @3 :UInt32;      # DeviceDef.id, or 0xffffffff
  parent @4 :UInt64;      # module of a kernel, context of others (gtap ids), or 0
  name @5 :Text;          # kernel name
  createdNs @6 :Int64;
  thread @7 :UInt32;
  binary @8 :BlobRef;     # module: its binary (native or IL) as given
  binaryFormat @9 :Text;  # module: "native" or "spirv"
  buildFlags @10 :Text;
  flags @11 :UInt32;      # creation flags as given by the program
  ordinal @12 :UInt32;    # queues and lists: command queue group ordinal
  index @13 :UInt32;
  properties @14 :List(KeyValue);  # e.g. kernel numKernelArgs, requiredGroupSize
  # Mode samples (format 1.5): a module's debug ELF as the runtime gives it
  # (zetModuleGetDebugInfo), and a kernel's device address of its first
  # instruction (zexKernelGetBaseAddress); empty / 0 when unknown.
  debugInfo @15 :BlobRef;
  codeAddress @16 :UInt64;
}

struct ObjectEnd {
  id @0 :UInt64;
  destroyedNs @1 :Int64;
}

struct BlobRef {
  hashLow @0 :UInt64;
  hashHigh @1 :UInt64;
  size @2 :UInt64;
}

struct Objects {
  created @0 :List(ObjectDef);
  destroyed @1 :List(ObjectEnd);
}

# --- Device work -------------------------------------------------------------

enum DeviceOpKind {
  kernel @0;
  copy @1;
  fill @2;
  barrier @3;
  other @4;
}

enum CopyDirection {
  unknown @0;
  hostToDevice @1;
  deviceToHost @2;
  deviceToDevice @3;
  hostToHost @4;
}

# One execution of a device operation. For a regular command list executed
# several times, each execution is its own DeviceOp.
struct DeviceOp {
  kind @0 :DeviceOpKind;
  device @1 :UInt32;
  queue @2 :UInt64;           # gtap id of the queue (or immediate list) it ran on
  commandList @3 :UInt64;     # gtap id of the list it was appended to
  kernel @4 :UInt64;          # gtap id of the kernel
  groupCount @5 :List(UInt32);  # x, y, z
  groupSize @6 :List(UInt32);   # x, y, z
  bytes @7 :UInt64;           # copies and fills
  direction @8 :CopyDirection;
  thread @9 :UInt32;          # thread of the appending call
  appendIndex @10 :UInt64;    # per-thread event index of that call's begin (ApiEvents), or ~0
  appendNs @11 :Int64;        # host time of the append
  submitNs @12 :Int64;        # host time of the submission (execute, or append on an immediate list)
  submitThread @13 :UInt32;
  timed @14 :Bool;            # device times below are valid
  startTicks @15 :UInt64;     # device kernel timestamps (global), kernelTimestampBits wide
  endTicks @16 :UInt64;
  stack @17 :UInt32;          # Stacks id of the appending call, 0 when none
  completedNs @18 :Int64;     # host time gtap saw the operation complete (an upper bound of its end)
  note @19 :Text;             # why it is untimed, when it is
  # HSA packets (docs/format.md):
  arguments @20 :Data;        # kernel dispatch: the kernarg segment as the packet pointed at it
  packetHeader @21 :UInt16;   # the AQL header as written (type, barrier bit, fence scopes)
  queueIndex @22 :UInt64;     # the packet's index in the program's queue
  gridSize @23 :List(UInt32); # kernel dispatch: work-items per dimension (groupCount rounds up)
  # The runtime level that recorded it: a HAL dispatch recorded into an IREE
  # command buffer (ireeHal) and the HSA packet it later becomes (hsa) are
  # two records of one piece of work. unknown in files from before the field.
  recordedBy @24 :Api;
  bindings @25 :List(BufferRef);  # IREE HAL: the buffers it binds or touches, in order (docs/format.md)
  # IREE HAL operations (recordedBy ireeHal): the method that issued it
  # ("dispatch", "queue_execute", "semaphore_wait", ...; docs/format.md), and
  # the semaphore values it waits for and signals.
  operation @26 :Text;
  waits @27 :List(SemaphoreValue);
  signals @28 :List(SemaphoreValue);
}

# A timeline semaphore (its address in the program) and a value on it.
struct SemaphoreValue {
  semaphore @0 :UInt64;
  value @1 :UInt64;
}

# A range of a buffer a HAL dispatch binds.
struct BufferRef {
  buffer @0 :UInt64;          # the buffer object's address in the program (0 for a slot)
  offset @1 :UInt64;
  length @2 :UInt64;
  slot @3 :UInt32;            # binding-table slot when buffer is 0
}

struct DeviceOps {
  ops @0 :List(DeviceOp);     # formats 1.0-1.3
  # 1.4 on: the operations as rows of varints (format/include/gtap/format/device_ops.h,
  # docs/format.md); `ops` is then empty.
  count @1 :UInt32;
  encoded @2 :Data;
}

# --- Memory ------------------------------------------------------------------

enum MemoryKind {
  unknown @0;
  host @1;
  device @2;
  shared @3;
  locked @4;                  # host memory locked (pinned) for device access
}

struct MemoryOp {
  isFree @0 :Bool;
  kind @1 :MemoryKind;
  device @2 :UInt32;
  address @3 :UInt64;
  size @4 :UInt64;            # frees: the size of what was freed, when known
  alignment @5 :UInt64;
  hostNs @6 :Int64;
  thread @7 :UInt32;
  stack @8 :UInt32;
}

struct MemoryOps {
  ops @0 :List(MemoryOp);
}

# --- Instruction samples (mode samples, format 1.5) --------------------------
# What the device's instruction sampling (a Level Zero metric group with an
# instruction-pointer metric, read through a metric streamer) reported between
# two reads of the streamer, as the runtime calculated it: one row per
# instruction address with a count per reason. A reader finds the kernel from
# the kernels' codeAddress and the module's debugInfo (docs/format.md).

struct InstructionSample {
  ip @0 :UInt64;                # the instruction's device address
  counts @1 :List(UInt64);      # per reason, in the order of InstructionSamples.reasons
}

struct InstructionSamples {
  device @0 :UInt32;            # DeviceDef.id
  group @1 :Text;               # the metric group that sampled, e.g. "EuStallSampling"
  reasons @2 :List(Text);       # what each count counts ("Active", "ControlStall", ...)
  periodNs @3 :UInt64;          # the sampling period asked for
  fromNs @4 :Int64;             # host time of the streamer's previous read (or its opening)
  toNs @5 :Int64;               # host time of this read: the samples were taken in between
  samples @6 :List(InstructionSample);
  dropped @7 :Bool;             # the runtime said it dropped samples before this read
  note @8 :Text;                # why the device was not sampled (then no samples), or empty
}

# --- Hardware counters (format 1.7) -----------------------------------------
# Counters the runtime's own counter interface read around one dispatch
# (Level Zero metric queries, HSA's AQL profile extension). A device op that
# was measured names its CounterSet and carries one value per counter of the
# set, in the set's order, and the raw data the runtime gave (device-ops row
# field kDevOpCounters, format/include/gtap/format/device_ops.h). Values are
# stored as 64 bits each: unsigned and signed integers as they are, booleans
# 0 or 1, reals as the bits of an IEEE double.

enum CounterType {
  unsigned @0;
  signed @1;
  real @2;
  boolean @3;
}

struct CounterDef {
  name @0 :Text;               # as the runtime spells it ("GpuTime", "SQ_WAVES")
  description @1 :Text;
  units @2 :Text;              # "ns", "cycles", "MHz", "" for counts
  type @3 :CounterType;
  block @4 :Text;              # HSA: the hardware block ("SQ", "GRBM"); Level Zero: the metric's component
}

struct CounterSet {
  id @0 :UInt32;               # > 0, as device ops name it; per file
  device @1 :UInt32;           # DeviceDef.id
  source @2 :Text;             # "levelZeroMetricQuery" or "hsaAqlProfile"
  group @3 :Text;              # Level Zero: the metric group; HSA: empty
  counters @4 :List(CounterDef);
  pass @5 :UInt32;             # which pass of the request this set is (0 first)
  passes @6 :UInt32;           # how many passes the whole request needs on this device
}

# A counter that was asked for and is not in any set of this file, and why:
# "needs another pass (2 of 3)", "not offered by the device", ...
struct CounterNote {
  counter @0 :Text;
  device @1 :UInt32;           # DeviceDef.id, or 0xffffffff for every device
  reason @2 :Text;
  pass @3 :UInt32;             # the pass that would collect it, when it needs another
}

struct Counters {
  sets @0 :List(CounterSet);
  notes @1 :List(CounterNote);
  requested @2 :Text;          # the request as the user gave it (GTAP_COUNTERS)
}

# --- Device metrics over time (format 1.7) -----------------------------------
# Samples of a device's state taken by gtap's own thread every interval while
# the program ran (Level Zero Sysman, ROCm SMI). A metric is a gauge (a value
# at the sample's time: frequency, temperature, memory used) or cumulative (a
# running total: energy, an engine's active time, bytes moved), whose rate is
# the difference between two samples over the time between them.

struct DeviceMetricDef {
  name @0 :Text;               # "engine compute active", "frequency actual", "energy", ...
  units @1 :Text;              # "ns", "MHz", "uJ", "C", "bytes"
  cumulative @2 :Bool;
}

# gtap_stop / gtap_start, GTAP_START_PAUSED, GTAP_TOGGLE_SIGNAL (format 1.8).
struct PhaseChange {
  hostNs @0 :Int64;   # when; 0: from the start (GTAP_START_PAUSED)
  paused @1 :Bool;    # true: recording paused here; false: resumed
}

struct Phases {
  changes @0 :List(PhaseChange);  # every change so far, in order (a later chunk repeats the earlier ones)
}

# gtap_range_push / gtap_range_pop (format 1.9): one row per range, written
# once it is closed (or at the last flush, still open).
struct Range {
  thread @0 :UInt32;    # ThreadDef.id of the thread that pushed and popped it
  name @1 :UInt32;      # index into Ranges.names of this chunk
  beginNs @2 :Int64;    # host ns of the push
  endNs @3 :Int64;      # host ns of the pop; the capture's end when openAtEnd
  depth @4 :UInt32;     # ranges of the thread open around it when pushed (0: outermost)
  openAtEnd @5 :Bool;   # never popped: closed when the file was
}

struct Ranges {
  names @0 :List(Text);   # the names this chunk's ranges use
  ranges @1 :List(Range); # in the order they closed
  unmatchedPops @2 :UInt64;  # pops with no range open on their thread, so far (the last chunk's is the total)
}

struct DeviceMetrics {
  device @0 :UInt32;           # DeviceDef.id
  source @1 :Text;             # "sysman", "rocmSmi"
  intervalNs @2 :UInt64;       # the interval asked for
  metrics @3 :List(DeviceMetricDef);
  times @4 :List(Int64);       # host time of each sample
  values @5 :List(Float64);    # sample after sample, one value per metric each; NaN: not read that time
  note @6 :Text;               # why the device has no metrics (then no samples), or empty
}

# --- CPU stacks --------------------------------------------------------------

struct HostModule {
  id @0 :UInt32;
  path @1 :Text;
  buildId @2 :Data;
  loadBias @3 :UInt64;       # runtime address minus ELF virtual address
  start @4 :UInt64;          # mapped address range of its loadable segments
  end @5 :UInt64;
}

struct StackDef {
  id @0 :UInt32;             # > 0
  frames @1 :List(UInt64);   # return addresses, innermost first (the first is the call site)
}

struct Stacks {
  modules @0 :List(HostModule);
  stacks @1 :List(StackDef);
}

# --- Replay stream -----------------------------------------------------------
# Every object and operation the device work depends on, and the bytes the
# device reads, in an order replay can follow one record at a time
# (docs/replay.md). Each operation's fields are its struct in ReplayRecord.

# Formats 1.0-1.1: which operation a positional record is. Its names are the
# names of ReplayRecord's union members.
enum ReplayOp {
  unsupported @0;          # a call replay cannot reproduce; replay fails on it
  device @1;
  contextCreate @2;
  contextDestroy @3;
  memAlloc @4;
  memFree @5;
  moduleCreate @6;
  moduleDestroy @7;
  kernelCreate @8;
  kernelDestroy @9;
  kernelSetGroupSize @10;
  kernelSetArgument @11;
  kernelSetIndirectAccess @12;
  kernelSetGlobalOffset @13;
  queueCreate @14;
  queueDestroy @15;
  listCreate @16;
  listCreateImmediate @17;
  listClose @18;
  listReset @19;
  listDestroy @20;
  eventPoolCreate @21;
  eventPoolDestroy @22;
  eventCreate @23;
  eventDestroy @24;
  eventHostSignal @25;
  eventHostReset @26;
  eventHostSynchronize @27;
  eventQueryStatus @28;
  fenceCreate @29;
  fenceDestroy @30;
  fenceReset @31;
  fenceHostSynchronize @32;
  fenceQueryStatus @33;
  queueSynchronize @34;
  execute @35;
  launchKernel @36;
  copy @37;
  copyRegion @38;
  fill @39;
  barrier @40;
  signalEvent @41;
  waitOnEvents @42;
  eventReset @43;
  hostData @44;            # bytes the device will read from host memory from here on
  readBack @45;            # bytes a device-to-host copy left for the program
  scopeBegin @46;
  scopeEnd @47;
}

# An external file a payload's bytes come from, with the identity it had.
struct FileRef {
  path @0 :Text;
  offset @1 :UInt64;       # of the bytes within the file
  fileSize @2 :UInt64;
  device @3 :UInt64;       # st_dev
  inode @4 :UInt64;
  mtimeNs @5 :Int64;
  hasDigest @6 :Bool;      # --file-validation=digest: XXH3-128 of the whole file
  digestLow @7 :UInt64;
  digestHigh @8 :UInt64;
}

struct Payload {
  size @0 :UInt64;         # bytes the payload stands for
  union {
    none @1 :Void;
    inline @2 :Data;       # small values: kernel arguments, fill patterns
    blob @3 :BlobRef;      # stored in this file's blobs, from blobOffset
    file @4 :FileRef;      # read from an external file at replay (file policy "reference")
  }
  blobOffset @5 :UInt64;   # blob: where the bytes start in it (a whole file stored once)
  origin @6 :FileRef;      # blob: the file the bytes were read from, when they were (path empty otherwise)
}

# How readers show a replay operation's field (dump, JSON Lines, docs/replay.md).
annotation replayRef @0xd3a1c6e2f0b84a11 (field) :Void;      # a gtap replay id (0: none)
annotation replayAddress @0xd3a1c6e2f0b84a12 (field) :Void;  # an address as the program had it
annotation replayHex @0xd3a1c6e2f0b84a13 (field) :Void;      # a number best read in hex
annotation replaySeq @0xd3a1c6e2f0b84a14 (field) :Void;      # the seq of another record
# On ReplayRecord's union members: what kind of operation it is (dump's summary).
annotation replayMakes @0xd3a1c6e2f0b84a15 (field) :Void;    # makes the object its first field names
annotation replayAppends @0xd3a1c6e2f0b84a16 (field) :Void;  # appended to a command list: device work
annotation replayPayload @0xd3a1c6e2f0b84a17 (field) :Text;   # what the record's payload holds
annotation replayNote @0xd3a1c6e2f0b84a18 (field) :Text;      # what a field or operation means, for the docs

struct Dim3 {
  x @0 :UInt64;
  y @1 :UInt64;
  z @2 :UInt64;
}

# One replay record. From format 1.2 the operation is the active member of the
# unnamed union below and its fields are that member's struct: this is the one
# definition of every operation's layout. Records of formats 1.0 and 1.1 carry
# `op` and the positional lists `object` .. `addresses` instead (their union
# reads as `positional`); readers convert them on load (docs/format.md).
struct ReplayRecord {
  seq @0 :UInt64;              # replay performs records in increasing seq
  thread @1 :UInt32;           # ThreadDef id of the calling thread
  op @2 :ReplayOp;             # formats 1.0-1.1 only
  function @3 :UInt32;         # FunctionDef id of the call, 0xffffffff for records gtap adds
  object @4 :UInt64;           # formats 1.0-1.1 only
  objects @5 :List(UInt64);    # formats 1.0-1.1 only
  values @6 :List(UInt64);     # formats 1.0-1.1 only
  addresses @7 :List(UInt64);  # formats 1.0-1.1 only
  payload @8 :Payload;         # the bytes the operation carries, as its struct says
  text @9 :Text;               # formats 1.0-1.1 only
  hostNs @10 :Int64;

  union {
    positional @11 :Void;              # formats 1.0-1.1: `op` and the lists
    unsupported @12 :Unsupported $replayNote("a call replay cannot reproduce; replay fails on it");
    device @13 :Device $replayMakes;
    contextCreate @14 :ContextCreate $replayMakes;
    contextDestroy @15 :Context;
    memAlloc @16 :MemAlloc $replayMakes;
    memFree @17 :MemFree;
    moduleCreate @18 :ModuleCreate $replayMakes $replayPayload("the module binary");
    moduleDestroy @19 :Module;
    kernelCreate @20 :KernelCreate $replayMakes;
    kernelDestroy @21 :Kernel;
    kernelSetGroupSize @22 :KernelGroupSize;
    kernelSetArgument @23 :KernelArgument $replayPayload("inline: the value's bytes");
    kernelSetIndirectAccess @24 :KernelFlags;
    kernelSetGlobalOffset @25 :KernelOffset;
    queueCreate @26 :QueueCreate $replayMakes;
    queueDestroy @27 :Queue;
    listCreate @28 :ListCreate $replayMakes;
    listCreateImmediate @29 :ListCreateImmediate $replayMakes;
    listClose @30 :CommandList;
    listReset @31 :CommandList;
    listDestroy @32 :CommandList;
    eventPoolCreate @33 :EventPoolCreate $replayMakes;
    eventPoolDestroy @34 :EventPool;
    eventCreate @35 :EventCreate $replayMakes;
    eventDestroy @36 :Event;
    eventHostSignal @37 :Event;
    eventHostReset @38 :Event;
    eventHostSynchronize @39 :EventWait;
    eventQueryStatus @40 :Event $replayNote("only successful queries: replay waits for the event");
    fenceCreate @41 :FenceCreate $replayMakes;
    fenceDestroy @42 :Fence;
    fenceReset @43 :Fence;
    fenceHostSynchronize @44 :FenceWait;
    fenceQueryStatus @45 :Fence $replayNote("only successful queries: replay waits for the fence");
    queueSynchronize @46 :QueueWait;
    execute @47 :Execute;
    launchKernel @48 :LaunchKernel $replayAppends;
    copy @49 :Copy $replayAppends $replayPayload("immediate lists, source outside every captured allocation: the source bytes");
    copyRegion @50 :CopyRegion $replayAppends $replayPayload("as copy, from the source region's first byte");
    fill @51 :Fill $replayAppends $replayPayload("inline: the pattern");
    barrier @52 :Barrier $replayAppends;
    signalEvent @53 :ListEvent $replayAppends;
    waitOnEvents @54 :WaitOnEvents $replayAppends;
    eventReset @55 :ListEvent $replayAppends;
    hostData @56 :HostData $replayPayload("the bytes the device will read from host memory from here on");
    readBack @57 :ReadBack $replayPayload("the bytes a device-to-host copy left for the program");
    scopeBegin @58 :Scope;
    scopeEnd @59 :Scope;
    # HSA (format 1.6 on): docs/replay.md, HSA.
    hsaAgent @60 :HsaAgent $replayMakes;
    hsaPool @61 :HsaPool $replayMakes;
    hsaAllocate @62 :HsaAllocate $replayMakes;
    hsaFree @63 :HsaFree;
    hsaAllowAccess @64 :HsaAllowAccess;
    hsaLock @65 :HsaLock $replayMakes $replayNote("host memory locked for the agents: replay locks a buffer of its own");
    hsaUnlock @66 :HsaLocked;
    hsaSignalCreate @67 :HsaSignalCreate $replayMakes;
    hsaSignalDestroy @68 :HsaSignal;
    hsaSignalOp @69 :HsaSignalOp $replayNote("a host store or read-modify-write of a signal");
    hsaSignalWait @70 :HsaSignalWait $replayNote("a wait (or a load) that saw its condition hold: replay waits for it too");
    hsaQueueCreate @71 :HsaQueueCreate $replayMakes;
    hsaQueueDestroy @72 :HsaQueue;
    hsaCodeObject @73 :HsaCodeObject $replayMakes $replayPayload("the code object's bytes");
    hsaCodeObjectDestroy @74 :HsaCodeObjectRef;
    hsaExecutableCreate @75 :HsaExecutableCreate $replayMakes;
    hsaExecutableLoad @76 :HsaExecutableLoad;
    hsaExecutableFreeze @77 :HsaExecutable;
    hsaExecutableDestroy @78 :HsaExecutable;
    hsaKernel @79 :HsaKernel $replayMakes $replayNote("a kernel symbol of a frozen executable");
    hsaDispatch @80 :HsaDispatch $replayAppends $replayPayload("inline: the kernarg segment, as the program wrote it");
    hsaBarrier @81 :HsaBarrier $replayAppends;
    hsaCopy @82 :HsaCopy $replayAppends $replayPayload("source outside every captured allocation and locked range: the source bytes");
    hsaFill @83 :HsaFill;
  }

  struct Unsupported { reason @0 :Text; }
  struct Device {
    device @0 :UInt64 $replayRef;
    driverIndex @1 :UInt32;
    deviceIndex @2 :UInt32;
    vendorId @3 :UInt32 $replayHex;
    deviceId @4 :UInt32 $replayHex;
    name @5 :Text;
  }
  struct ContextCreate {
    context @0 :UInt64 $replayRef;
    devices @1 :List(UInt64) $replayRef $replayNote("zeContextCreateEx's devices");
    flags @2 :UInt32;
  }
  struct Context { context @0 :UInt64 $replayRef; }
  struct MemAlloc {
    allocation @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    device @2 :UInt64 $replayRef $replayNote("0 for host memory");
    kind @3 :UInt8 $replayNote("MemoryKind: 1 host, 2 device, 3 shared");
    size @4 :UInt64;
    alignment @5 :UInt64;
    address @6 :UInt64 $replayAddress;
  }
  struct MemFree {
    allocation @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    address @2 :UInt64 $replayAddress;
  }
  struct ModuleCreate {
    module @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    device @2 :UInt64 $replayRef;
    format @3 :UInt32 $replayNote("ze_module_format_t");
    buildFlags @4 :Text;
  }
  struct Module { module @0 :UInt64 $replayRef; }
  struct KernelCreate {
    kernel @0 :UInt64 $replayRef;
    module @1 :UInt64 $replayRef;
    flags @2 :UInt32;
    name @3 :Text;
  }
  struct Kernel { kernel @0 :UInt64 $replayRef; }
  struct KernelGroupSize {
    kernel @0 :UInt64 $replayRef;
    groupSize @1 :Dim3;
  }
  struct KernelArgument {
    kernel @0 :UInt64 $replayRef;
    index @1 :UInt32;
    size @2 :UInt64;
    hasValue @3 :UInt8 $replayNote("0: the program passed a null value (local memory)");
  }
  struct KernelFlags {
    kernel @0 :UInt64 $replayRef;
    flags @1 :UInt32;
  }
  struct KernelOffset {
    kernel @0 :UInt64 $replayRef;
    offset @1 :Dim3;
  }
  struct QueueCreate {
    queue @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    device @2 :UInt64 $replayRef;
    ordinal @3 :UInt32;
    index @4 :UInt32;
    flags @5 :UInt32;
    mode @6 :UInt32;
    priority @7 :UInt32;
  }
  struct Queue { queue @0 :UInt64 $replayRef; }
  struct ListCreate {
    list @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    device @2 :UInt64 $replayRef;
    ordinal @3 :UInt32;
    flags @4 :UInt32;
  }
  struct ListCreateImmediate {
    list @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    device @2 :UInt64 $replayRef;
    ordinal @3 :UInt32;
    index @4 :UInt32;
    flags @5 :UInt32;
    mode @6 :UInt32;
    priority @7 :UInt32;
  }
  struct CommandList { list @0 :UInt64 $replayRef; }
  struct EventPoolCreate {
    pool @0 :UInt64 $replayRef;
    context @1 :UInt64 $replayRef;
    devices @2 :List(UInt64) $replayRef;
    flags @3 :UInt32;
    count @4 :UInt32;
  }
  struct EventPool { pool @0 :UInt64 $replayRef; }
  struct EventCreate {
    event @0 :UInt64 $replayRef;
    pool @1 :UInt64 $replayRef;
    index @2 :UInt32;
    signalScope @3 :UInt32;
    waitScope @4 :UInt32;
  }
  struct Event { event @0 :UInt64 $replayRef; }
  struct EventWait {
    event @0 :UInt64 $replayRef;
    timeout @1 :UInt64 $replayNote("as the program gave it");
  }
  struct FenceCreate {
    fence @0 :UInt64 $replayRef;
    queue @1 :UInt64 $replayRef;
    flags @2 :UInt32;
  }
  struct Fence { fence @0 :UInt64 $replayRef; }
  struct FenceWait {
    fence @0 :UInt64 $replayRef;
    timeout @1 :UInt64;
  }
  struct QueueWait {
    queue @0 :UInt64 $replayRef;
    timeout @1 :UInt64;
  }
  struct Execute {
    queue @0 :UInt64 $replayRef;
    fence @1 :UInt64 $replayRef $replayNote("0: none");
    lists @2 :List(UInt64) $replayRef;
    firstDispatch @3 :UInt64 $replayNote("the dispatch number of the first launch it hands over");
    dispatches @4 :UInt64 $replayNote("launches it hands over");
  }
  struct LaunchKernel {
    list @0 :UInt64 $replayRef;
    kernel @1 :UInt64 $replayRef;
    signal @2 :UInt64 $replayRef;
    waits @3 :List(UInt64) $replayRef;
    groups @4 :Dim3;
    cooperative @5 :UInt8;
    dispatch @6 :UInt64 $replayNote("immediate lists; 2^64-1 on a regular list (numbered at each execute)");
  }
  struct Copy {
    list @0 :UInt64 $replayRef;
    signal @1 :UInt64 $replayRef;
    waits @2 :List(UInt64) $replayRef;
    size @3 :UInt64;
    dst @4 :UInt64 $replayAddress;
    src @5 :UInt64 $replayAddress;
  }
  struct CopyRegion {
    list @0 :UInt64 $replayRef;
    signal @1 :UInt64 $replayRef;
    waits @2 :List(UInt64) $replayRef;
    dstOrigin @3 :Dim3;
    dstExtent @4 :Dim3 $replayNote("width, height, depth");
    dstPitch @5 :UInt64;
    dstSlicePitch @6 :UInt64;
    srcOrigin @7 :Dim3;
    srcExtent @8 :Dim3;
    srcPitch @9 :UInt64;
    srcSlicePitch @10 :UInt64;
    dst @11 :UInt64 $replayAddress;
    src @12 :UInt64 $replayAddress;
  }
  struct Fill {
    list @0 :UInt64 $replayRef;
    signal @1 :UInt64 $replayRef;
    waits @2 :List(UInt64) $replayRef;
    size @3 :UInt64;
    dst @4 :UInt64 $replayAddress;
  }
  struct Barrier {
    list @0 :UInt64 $replayRef;
    signal @1 :UInt64 $replayRef;
    waits @2 :List(UInt64) $replayRef;
  }
  struct ListEvent {
    list @0 :UInt64 $replayRef;
    event @1 :UInt64 $replayRef;
  }
  struct WaitOnEvents {
    list @0 :UInt64 $replayRef;
    events @1 :List(UInt64) $replayRef;
  }
  struct HostData {
    union {
      allocation @0 :UInt64 $replayRef $replayNote("a host or shared allocation's pages");
      copy @1 :UInt64 $replaySeq $replayNote("the source of the copy with this seq (outside every allocation)");
    }
    offset @2 :UInt64 $replayNote("of the first byte, in the allocation or the copy's source");
    address @3 :UInt64 $replayAddress $replayNote("the captured address of the first byte");
  }
  struct ReadBack {
    copy @0 :UInt64 $replaySeq $replayNote("the copy whose destination this is; 0 with allocation");
    offset @1 :UInt64 $replayNote("of the first byte in the destination (or the allocation)");
    dst @2 :UInt64 $replayAddress $replayNote("the captured address of the first byte");
    allocation @3 :UInt64 $replayRef $replayNote("HSA: host memory (an allocation or locked range) the device wrote, read by the program after a wait");
  }
  struct Scope { scope @0 :Text; }

  # --- HSA ---
  struct HsaAgent {
    agent @0 :UInt64 $replayRef;
    index @1 :UInt32 $replayNote("in hsa_iterate_agents' order");
    deviceType @2 :UInt32 $replayNote("hsa_device_type_t: 0 CPU, 1 GPU, 2 DSP");
    name @3 :Text;
    isa @4 :Text $replayNote("its first ISA's name, which replay matches; empty without one");
    vendor @5 :Text;
    productName @6 :Text;
    chipId @7 :UInt32 $replayHex;
    computeUnits @8 :UInt32;
    wavefrontSize @9 :UInt32;
  }
  struct HsaPool {
    pool @0 :UInt64 $replayRef $replayNote("a memory pool, or the region with its handle");
    agent @1 :UInt64 $replayRef $replayNote("the agent whose pools list it");
    segment @2 :UInt32 $replayNote("hsa_amd_segment_t: 0 global, 1 read-only, 2 private, 3 group");
    globalFlags @3 :UInt32 $replayHex $replayNote("hsa_amd_memory_pool_global_flag_t");
    size @4 :UInt64;
    ordinal @5 :UInt32 $replayNote("among the agent's pools of the same segment and flags, in iteration order");
  }
  struct HsaAllocate {
    allocation @0 :UInt64 $replayRef;
    pool @1 :UInt64 $replayRef;
    size @2 :UInt64;
    flags @3 :UInt32;
    address @4 :UInt64 $replayAddress;
    hostAccessible @5 :Bool $replayNote("a pool of a CPU agent: its pages are recorded as host data");
  }
  struct HsaFree {
    allocation @0 :UInt64 $replayRef;
    address @1 :UInt64 $replayAddress;
  }
  struct HsaAllowAccess {
    allocation @0 :UInt64 $replayRef $replayNote("an allocation or a locked range");
    agents @1 :List(UInt64) $replayRef;
    address @2 :UInt64 $replayAddress;
  }
  struct HsaLock {
    lock @0 :UInt64 $replayRef;
    address @1 :UInt64 $replayAddress $replayNote("the host memory");
    size @2 :UInt64;
    agentAddress @3 :UInt64 $replayAddress $replayNote("where the agents reach it");
    agents @4 :List(UInt64) $replayRef $replayNote("empty: every agent");
    pool @5 :UInt64 $replayRef $replayNote("hsa_amd_memory_lock_to_pool's pool; 0 none");
    flags @6 :UInt32;
  }
  struct HsaLocked { lock @0 :UInt64 $replayRef; }
  struct HsaSignalCreate {
    signal @0 :UInt64 $replayRef;
    initialValue @1 :Int64;
    consumers @2 :List(UInt64) $replayRef;
    attributes @3 :UInt64 $replayHex $replayNote("hsa_amd_signal_create's; 0 from hsa_signal_create");
  }
  struct HsaSignal { signal @0 :UInt64 $replayRef; }
  struct HsaSignalOp {
    signal @0 :UInt64 $replayRef;
    op @1 :UInt8 $replayNote("0 store, 1 add, 2 subtract, 3 and, 4 or, 5 xor, 6 exchange, 7 compare-and-swap");
    value @2 :Int64;
    expected @3 :Int64 $replayNote("compare-and-swap only");
  }
  struct HsaSignalWait {
    signals @0 :List(UInt64) $replayRef;
    conditions @1 :List(UInt32) $replayNote("hsa_signal_condition_t, one per signal");
    values @2 :List(Int64) $replayNote("the values compared with, one per signal");
    satisfied @3 :UInt32 $replayNote("the index of the signal whose condition held");
    observed @4 :Int64 $replayNote("the value the program saw");
    kind @5 :UInt8 $replayNote("0 hsa_signal_wait_*, 1 hsa_amd_signal_wait_any, 2 a load that saw a completion signal fall");
  }
  struct HsaQueueCreate {
    queue @0 :UInt64 $replayRef;
    agent @1 :UInt64 $replayRef;
    size @2 :UInt32 $replayNote("packets");
    type @3 :UInt32 $replayNote("hsa_queue_type32_t");
    privateSegmentSize @4 :UInt32;
    groupSegmentSize @5 :UInt32;
    address @6 :UInt64 $replayAddress $replayNote("the hsa_queue_t the program got (kernargs may point at it)");
  }
  struct HsaQueue { queue @0 :UInt64 $replayRef; }
  struct HsaCodeObject {
    codeObject @0 :UInt64 $replayRef $replayNote("a code object reader");
    target @1 :Text $replayNote("amdhsa.target of its metadata; empty without metadata");
  }
  struct HsaCodeObjectRef { codeObject @0 :UInt64 $replayRef; }
  struct HsaExecutableCreate {
    executable @0 :UInt64 $replayRef;
    profile @1 :UInt32 $replayNote("hsa_profile_t");
    roundingMode @2 :UInt32 $replayNote("hsa_default_float_rounding_mode_t");
    options @3 :Text;
  }
  struct HsaExecutableLoad {
    executable @0 :UInt64 $replayRef;
    agent @1 :UInt64 $replayRef;
    codeObject @2 :UInt64 $replayRef;
    options @3 :Text;
  }
  struct HsaExecutable { executable @0 :UInt64 $replayRef; }
  struct HsaKernel {
    kernel @0 :UInt64 $replayRef;
    executable @1 :UInt64 $replayRef;
    agent @2 :UInt64 $replayRef;
    codeObject @3 :UInt64 $replayRef $replayNote("the code object whose metadata describes it; 0 unknown");
    symbol @4 :Text $replayNote("e.g. vector_add.kd");
    object @5 :UInt64 $replayAddress $replayNote("the kernel object dispatch packets carry");
    kernargSize @6 :UInt32;
    kernargAlignment @7 :UInt32;
    groupSegmentSize @8 :UInt32;
    privateSegmentSize @9 :UInt32;
  }
  struct KernargPointer {
    offset @0 :UInt32 $replayNote("in the kernarg segment");
    size @1 :UInt8 $replayNote("4 or 8 bytes");
    kind @2 :UInt8 $replayNote("0 captured memory: translated; 1 a queue's hsa_queue_t: the replay's queue; 2 null, group or private: kept");
    queue @3 :UInt64 $replayRef $replayNote("kind 1: the queue");
  }
  struct HsaDispatch {
    queue @0 :UInt64 $replayRef;
    index @1 :UInt64 $replayNote("the packet's index in the program's queue");
    header @2 :UInt16 $replayHex;
    setup @3 :UInt16 $replayHex;
    workgroup @4 :Dim3;
    grid @5 :Dim3;
    privateSegmentSize @6 :UInt32;
    groupSegmentSize @7 :UInt32;
    kernel @8 :UInt64 $replayRef;
    kernargAddress @9 :UInt64 $replayAddress;
    signal @10 :UInt64 $replayRef $replayNote("the completion signal; 0 none");
    dispatch @11 :UInt64 $replayNote("the dispatch number");
    pointers @12 :List(KernargPointer) $replayNote("the addresses in the kernarg segment, by the code object's metadata");
    more @13 :Bool $replayNote("the program had written more packets to this queue when it rang the doorbell: replay rings once, after the last");
  }
  struct HsaBarrier {
    queue @0 :UInt64 $replayRef;
    index @1 :UInt64;
    header @2 :UInt16 $replayHex;
    any @3 :Bool $replayNote("barrier-OR; barrier-AND otherwise");
    dependencies @4 :List(UInt64) $replayRef $replayNote("the packet's five dependency signals, 0 where null");
    signal @5 :UInt64 $replayRef;
    more @6 :Bool $replayNote("as hsaDispatch's");
  }
  struct HsaCopy {
    dst @0 :UInt64 $replayAddress;
    dstAgent @1 :UInt64 $replayRef;
    src @2 :UInt64 $replayAddress;
    srcAgent @3 :UInt64 $replayRef;
    size @4 :UInt64;
    dependencies @5 :List(UInt64) $replayRef;
    signal @6 :UInt64 $replayRef;
    synchronous @7 :Bool $replayNote("hsa_memory_copy: done when the call returns");
  }
  struct HsaFill {
    dst @0 :UInt64 $replayAddress;
    value @1 :UInt32 $replayHex;
    count @2 :UInt64 $replayNote("32-bit words");
  }
}

struct Replay {
  records @0 :List(ReplayRecord);
}
