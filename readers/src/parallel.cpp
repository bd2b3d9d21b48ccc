#include "gtap/readers/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <streambuf>
#include <string>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gtap::readers {

namespace {
std::atomic<unsigned> configuredJobs{0};
}  // namespace

void setReadJobs(unsigned jobs) { configuredJobs.store(jobs); }

unsigned readJobs() {
  unsigned jobs = configuredJobs.load();
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  return jobs;
}

void forEachInParallel(size_t count, const std::function<void(size_t)>& work,
                       const std::function<void(size_t)>& inOrder) {
  size_t threads = std::min<size_t>(readJobs(), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) {
      work(i);
      inOrder(i);
    }
    return;
  }
  const size_t window = 2 * threads;
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0;       // the next index to work on
  size_t merged = 0;     // indices below have had inOrder (or failed)
  bool merging = false;  // a thread is running inOrder calls
  std::vector<char> done(count, 0);
  std::vector<std::exception_ptr> errors(count);
  auto run = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return next >= count || next < merged + window; });
      if (next >= count) break;
      size_t i = next++;
      lock.unlock();
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      lock.lock();
      done[i] = 1;
      if (merging) continue;  // the thread merging takes this one too
      merging = true;
      while (merged < count && done[merged]) {
        size_t m = merged;
        if (!errors[m]) {
          lock.unlock();
          try {
            inOrder(m);
          } catch (...) {
            errors[m] = std::current_exception();
          }
          lock.lock();
        }
        ++merged;
        changed.notify_all();
      }
      merging = false;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void forEachInParallel(size_t count, const std::function<void(size_t)>& work) {
  forEachInParallel(count, work, [](size_t) {});
}

namespace {

// One index's bytes on their way to the output.
struct Channel {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> chunks;
  size_t bytes = 0;
  bool done = false;
  bool abandoned = false;  // nobody will copy it: its bytes are dropped
};

// A producer's stream: blocks of bytes handed to its channel, waiting while
// the channel holds its share.
class ChannelBuffer : public std::streambuf {
 public:
  static constexpr size_t kBlock = 256 << 10;
  ChannelBuffer(Channel& channel, size_t held) : channel_(channel), held_(held) { block_.reserve(kBlock); }

  // Hands over what is left.
  void push() {
    if (block_.empty()) return;
    std::unique_lock lock(channel_.mutex);
    channel_.changed.wait(lock, [&] {
      return channel_.abandoned || channel_.bytes == 0 || channel_.bytes + block_.size() <= held_;
    });
    if (!channel_.abandoned) {
      channel_.bytes += block_.size();
      channel_.chunks.push_back(std::move(block_));
      channel_.changed.notify_all();
    }
    block_ = std::string();
    block_.reserve(kBlock);
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      block_.push_back(traits_type::to_char_type(c));
      if (block_.size() >= kBlock) push();
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    block_.append(s, static_cast<size_t>(n));
    if (block_.size() >= kBlock) push();
    return n;
  }
  int sync() override {
    push();
    return 0;
  }

 private:
  Channel& channel_;
  size_t held_;
  std::string block_;
};

}  // namespace

void writeInOrder(size_t count, std::ostream& out, const std::function<void(size_t, std::ostream&)>& produce,
                  size_t held) {
  size_t threads = std::min<size_t>(readJobs(), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) produce(i, out);
    return;
  }
  std::vector<std::unique_ptr<Channel>> channels(count);
  for (auto& c : channels) c = std::make_unique<Channel>();
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto run = [&] {
    for (;;) {
      if (stop.load()) return;
      size_t i = next.fetch_add(1);
      if (i >= count) return;
      Channel& channel = *channels[i];
      {
        ChannelBuffer buffer(channel, held);
        std::ostream stream(&buffer);
        try {
          produce(i, stream);
          stream.flush();
        } catch (...) {
          errors[i] = std::current_exception();
        }
        buffer.push();
      }
      std::lock_guard lock(channel.mutex);
      channel.done = true;
      channel.changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(run);
  size_t failed = count;
  for (size_t i = 0; i < count && failed == count; ++i) {
    Channel& channel = *channels[i];
    for (;;) {
      std::deque<std::string> ready;
      bool finished;
      {
        std::unique_lock lock(channel.mutex);
        channel.changed.wait(lock, [&] { return !channel.chunks.empty() || channel.done; });
        ready.swap(channel.chunks);
        channel.bytes = 0;
        finished = channel.done;
        channel.changed.notify_all();
      }
      for (const auto& chunk : ready) out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      if (finished) break;
    }
    if (errors[i]) failed = i;
  }
  // After a failure nothing more is copied: the producers still at work
  // drop what they write, and no new index is taken.
  stop.store(true);
  for (auto& c : channels) {
    std::lock_guard lock(c->mutex);
    c->abandoned = true;
    c->chunks.clear();
    c->changed.notify_all();
  }
  for (auto& t : pool) t.join();
  if (failed < count) std::rethrow_exception(errors[failed]);
}

}  // namespace gtap::readers
