// The state of a capture session, shared by its life (session.cpp: start,
// threads, flushes, exec, fork, exit) and its writer thread
// (writer_thread.cpp, which alone writes the file). One per process; a
// forked child makes its own.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "clock.h"
#include "config.h"
#include "gtap/format/schema/capture.capnp.h"
#include "gtap/format/writer.h"
#include "record.h"
#include "stack_table.h"
#include "thread_state.h"

namespace gtap::core {

struct Session {
  explicit Session(const Config& c);

  Config cfg;
  int pid = 0;
  int forkedFrom = 0;
  // When the session began, taken on the program's thread that began it
  // (the writer may first run after the program's first calls): the run's
  // time zero in the file.
  int64_t startHostNs = 0;
  int64_t startRealtimeNs = 0;
  std::unique_ptr<format::CaptureWriter> file;
  BlockPool pool;
  std::mutex registryMutex;
  std::vector<ThreadState*> threads;
  uint32_t nextThreadId = 0;
  std::thread writer;
  pthread_t writerHandle{};
  int wakeFd = -1;

  std::atomic<bool> recording{true};  // false once a write failed
  std::atomic<bool> stopRequested{false};
  std::atomic<bool> writerDone{false};
  std::atomic<uint32_t> flushRequests{0};
  std::atomic<uint32_t> flushesDone{0};
  std::atomic<int> stopSignal{0};
  // Exec: each exec takes a number (execRequests) and waits until the writer
  // has written everything and the trailer after seeing that number
  // (execServed); the writer then waits while an exec is under way
  // (execPending > 0).
  std::atomic<uint32_t> execRequests{0};
  std::atomic<uint32_t> execServed{0};
  std::atomic<int> execPending{0};
  // Set when the process starts to exit: from then on only the exiting
  // thread's calls (its atexit handlers, static destructors) are recorded, so
  // threads still calling cannot keep the final drains chasing their records.
  std::atomic<bool> exiting{false};
  pthread_t exitingThread{};
  // Why the session stops: set once, before stopRequested, by the first
  // finishSession (a string literal, so the writer may read it any time);
  // null when a signal stopped it (stopSignal says which).
  std::atomic<const char*> stopReason{nullptr};

  // Writer thread only.
  TickConverter ticks;
  std::vector<uint8_t> functionDefined = std::vector<uint8_t>(65536, 0);
  std::vector<uint16_t> newFunctions;
  std::vector<std::pair<const Record*, const Record*>> spans;
  std::vector<Block*> toRelease;
  uint64_t eventsWritten = 0;
  uint64_t eventsDropped = 0;
  uint32_t threadsSeen = 0;
  StackTable stacks;  // this file's

  // The file as front ends' chunk producers see it (chunk_producer.h).
  struct Sink;

  // Wakes the writer.
  void kick();
  // The calling thread's state, made and added to the registry.
  ThreadState* registerThread();
  // Waits for the writer with sleeps only (usable from a signal handler).
  bool waitFor(const std::atomic<bool>& flag, int timeoutMs);

  // --- the writer thread (writer_thread.cpp) ---
  // Its loop: drains on a timer or when kicked, until the session stops;
  // then closes the file.
  void run();
  // In the writer's catch block: nothing more is written (the file keeps
  // what was, without a trailer).
  void stopAfterException();

 private:
  void writeFileInfo();
  size_t collectSpans(ThreadState* t, uint64_t upTo, bool take);
  void releaseConsumed();
  bool fullyDrained(ThreadState* t);
  void encode(ThreadState* t, const std::vector<std::pair<const Record*, const Record*>>& published, size_t total);
  void encodeThread(ThreadState* t, bool withOpenCalls);
  void defineThread(ThreadState* t, schema::Definitions::Builder defs, int64_t firstNs);
  void stopRecordingAfterError();
  void drain(bool final);
  void suspendForExec(uint32_t asked);
};

}  // namespace gtap::core
