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
}

# A run of one thread's events in the order the thread produced them. Calls
# are begin/end pairs matched per thread (innermost open begin first), so calls
# cut by a crash stay visible as begins. The events are a byte stream, each:
#   varint (function << 1 | kind)       kind: 0 callBegin, 1 callEnd
#   varint time delta in ns from the previous event of the thread (>= 0)
#   callEnd only: zigzag varint result code
# (format/include/gtap/format/api_events.h encodes and decodes it.)
struct ApiEvents {
  thread @0 :UInt32;
  firstIndex @1 :UInt64;    # per-thread index of the first event here
  baseHostNs @2 :Int64;     # time the first delta starts from
  count @3 :UInt32;         # events in `encoded`
  encoded @4 :Data;
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
