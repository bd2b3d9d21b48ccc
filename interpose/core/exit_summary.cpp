#include "exit_summary.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "config.h"
#include "functions.h"

namespace gtap::core::summary {

namespace {

struct Tally {
  uint64_t count = 0, untimed = 0;
  uint64_t ns = 0, bytes = 0;
};

struct Device {
  uint64_t frequencyHz = 0;
  uint8_t kernelBits = 0;
};

// Written by the writer thread; held across a fork so a child never copies
// them half changed.
struct Tables {
  std::mutex mu;
  std::vector<Tally> calls = std::vector<Tally>(65536);
  uint64_t callCount = 0;
  std::unordered_map<uint64_t, Tally> kernels;  // by kernel object id
  std::unordered_map<uint64_t, std::string> kernelNames;
  std::unordered_map<uint32_t, Device> devices;
  Tally copies[5];  // by schema::CopyDirection
  uint64_t halDispatches = 0, otherOps = 0;
};

Tables& tables() {
  static Tables* t = new Tables;  // the last print may come after static destructors
  return *t;
}

bool on() { return config().summary; }

// Device ticks from start to end in ns, as the readers count them: the
// difference modulo the timestamp's width; false when it runs backwards.
bool spanNs(const Device& d, uint64_t start, uint64_t end, uint64_t& ns) {
  if (!d.frequencyHz || !d.kernelBits) return false;
  uint8_t bits = d.kernelBits;
  uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t diff = (end - start) & mask;
  if (bits < 64 ? (diff >> (bits - 1)) & 1 : diff >> 63) return false;
  ns = static_cast<uint64_t>(static_cast<unsigned __int128>(diff) * 1000000000u / d.frequencyHz);
  return true;
}

// Fixed-width text made without stdio's number formatting (the program's
// locale may put a comma in a decimal).
class Line {
 public:
  Line() { add("gtap: "); }
  Line& add(std::string_view s) {
    text_.append(s);
    return *this;
  }
  Line& left(std::string_view s, size_t width) {
    if (s.size() > width) {
      text_.append(s.substr(0, width - 3)).append("...");
    } else {
      text_.append(s).append(width - s.size(), ' ');
    }
    return *this;
  }
  Line& right(std::string_view s, size_t width) {
    if (s.size() < width) text_.append(width - s.size(), ' ');
    text_.append(s);
    return *this;
  }
  void write() {
    text_ += '\n';
    for (size_t done = 0; done < text_.size();) {
      ssize_t n = ::write(STDERR_FILENO, text_.data() + done, text_.size() - done);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

 private:
  std::string text_;
};

std::string number(uint64_t v) { return std::to_string(v); }

// `scaled` hundredths of a unit, as "12.34".
std::string twoPlaces(uint64_t hundredths) {
  std::string frac = std::to_string(hundredths % 100);
  return std::to_string(hundredths / 100) + "." + (frac.size() < 2 ? "0" : "") + frac;
}

std::string duration(uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + " ns";
  if (ns < 1000000) return twoPlaces((ns + 5) / 10) + " us";
  if (ns < 1000000000) return twoPlaces((ns + 5000) / 10000) + " ms";
  return twoPlaces((ns + 5000000) / 10000000) + " s";
}

std::string bytes(uint64_t b) {
  auto oneDecimal = [](uint64_t v, uint64_t unit) {
    uint64_t tenths = (v * 10 + unit / 2) / unit;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
  };
  if (b < 1024) return std::to_string(b) + " B";
  if (b < (uint64_t{1} << 20)) return oneDecimal(b, 1024) + " KiB";
  if (b < (uint64_t{1} << 30)) return oneDecimal(b, uint64_t{1} << 20) + " MiB";
  return oneDecimal(b, uint64_t{1} << 30) + " GiB";
}

std::string share(uint64_t part, uint64_t whole) {
  if (!whole) return "-";
  uint64_t tenths = static_cast<uint64_t>((static_cast<unsigned __int128>(part) * 1000 + whole / 2) / whole);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

constexpr size_t kTop = 5;
constexpr size_t kNameWidth = 36;

}  // namespace

// Registered before every other gtap fork handler, so the tables' lock is
// taken last before a fork: the others may wait for the writer to finish a
// flush, which may be waiting for this lock.
static __attribute__((constructor(101))) void holdTablesAcrossFork() {
  pthread_atfork([] { tables().mu.lock(); }, [] { tables().mu.unlock(); }, [] { tables().mu.unlock(); });
}

void restart() {
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  std::fill(t.calls.begin(), t.calls.end(), Tally{});
  t.callCount = 0;
  t.kernels.clear();
  for (Tally& c : t.copies) c = Tally{};
  t.halDispatches = t.otherOps = 0;
}

void noteCall(uint16_t function, int64_t durationNs) {
  if (!on()) return;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  Tally& c = t.calls[function];
  ++c.count;
  c.ns += static_cast<uint64_t>(std::max<int64_t>(durationNs, 0));
  ++t.callCount;
}

void noteDevice(uint32_t id, uint64_t frequencyHz, uint8_t kernelBits) {
  if (!on()) return;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  t.devices[id] = {frequencyHz, kernelBits};
}

void noteKernelName(uint64_t kernel, std::string_view name) {
  if (!on()) return;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  t.kernelNames[kernel] = std::string(name);
}

void noteOp(const Op& op) {
  if (!on()) return;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  Tally* tally = nullptr;
  if (op.kind == schema::DeviceOpKind::KERNEL) {
    // IREE HAL dispatches are the program's view of kernels the device
    // level may record again: counted apart.
    if (op.recordedBy == schema::Api::IREE_HAL) {
      ++t.halDispatches;
      return;
    }
    tally = &t.kernels[op.kernel];
  } else if (op.kind == schema::DeviceOpKind::COPY) {
    auto d = static_cast<size_t>(op.direction);
    tally = &t.copies[d < 5 ? d : 0];
    tally->bytes += op.bytes;
  } else {
    ++t.otherOps;
    return;
  }
  ++tally->count;
  uint64_t ns = 0;
  auto dev = t.devices.find(op.device);
  if (op.timed && dev != t.devices.end() && spanNs(dev->second, op.start, op.end, ns))
    tally->ns += ns;
  else
    ++tally->untimed;
}

void print(int pid, const std::string& path, int64_t durationNs) {
  if (!on()) return;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);

  // Kernels by name (several objects may share one), most device time first.
  std::unordered_map<std::string, Tally> byName;
  Tally allKernels;
  for (const auto& [id, tally] : t.kernels) {
    auto named = t.kernelNames.find(id);
    Tally& k = byName[named != t.kernelNames.end() && !named->second.empty() ? named->second
                                                                              : "kernel#" + std::to_string(id)];
    k.count += tally.count;
    k.untimed += tally.untimed;
    k.ns += tally.ns;
    allKernels.count += tally.count;
    allKernels.untimed += tally.untimed;
    allKernels.ns += tally.ns;
  }
  std::vector<std::pair<std::string, Tally>> kernels(byName.begin(), byName.end());
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    if (a.second.ns != b.second.ns) return a.second.ns > b.second.ns;
    if (a.second.count != b.second.count) return a.second.count > b.second.count;
    return a.first < b.first;
  });
  std::vector<std::pair<uint16_t, Tally>> calls;
  for (size_t f = 0; f < t.calls.size(); ++f)
    if (t.calls[f].count) calls.emplace_back(static_cast<uint16_t>(f), t.calls[f]);
  std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
    if (a.second.ns != b.second.ns) return a.second.ns > b.second.ns;
    return a.second.count > b.second.count;
  });

  Line()
      .add("summary of pid ")
      .add(number(static_cast<uint64_t>(pid)))
      .add(" (")
      .add(path)
      .add(")")
      .write();
  Line l;
  l.add("  ran ")
      .add(duration(static_cast<uint64_t>(std::max<int64_t>(durationNs, 0))))
      .add(", ")
      .add(number(t.callCount))
      .add(" API calls, ")
      .add(number(allKernels.count))
      .add(" kernels (")
      .add(number(allKernels.untimed))
      .add(" untimed)");
  if (t.halDispatches) l.add(", ").add(number(t.halDispatches)).add(" HAL dispatches");
  l.write();

  if (!kernels.empty()) {
    Line().left("top kernels", kNameWidth + 2).right("count", 8).right("untimed", 9).right("device time", 13).right("share", 8).write();
    for (size_t i = 0; i < kernels.size() && i < kTop; ++i) {
      const auto& [name, k] = kernels[i];
      Line()
          .add("  ")
          .left(name, kNameWidth)
          .right(number(k.count), 8)
          .right(number(k.untimed), 9)
          .right(duration(k.ns), 13)
          .right(share(k.ns, allKernels.ns), 8)
          .write();
    }
    if (kernels.size() > kTop)
      Line().add("  (").add(number(kernels.size() - kTop)).add(" more kernels)").write();
  }

  static constexpr const char* kDirections[5] = {"unknown direction", "host-to-device", "device-to-host",
                                                  "device-to-device", "host-to-host"};
  bool anyCopy = false;
  for (const Tally& c : t.copies) anyCopy |= c.count > 0;
  if (anyCopy) {
    Line().left("transfers", kNameWidth + 2).right("count", 8).right("bytes", 12).right("device time", 13).write();
    for (size_t d : {1, 2, 3, 4, 0}) {
      const Tally& c = t.copies[d];
      if (!c.count) continue;
      Line row;
      row.add("  ").left(kDirections[d], kNameWidth).right(number(c.count), 8).right(bytes(c.bytes), 12).right(duration(c.ns), 13);
      if (c.untimed) row.add("  (").add(number(c.untimed)).add(" untimed)");
      row.write();
    }
  }

  if (!calls.empty()) {
    Line().left("top API functions", kNameWidth + 2).right("count", 8).right("time", 13).write();
    for (size_t i = 0; i < calls.size() && i < kTop; ++i) {
      const FunctionInfo* info = functionInfo(calls[i].first);
      Line()
          .add("  ")
          .left(info ? info->name : "unknown", kNameWidth)
          .right(number(calls[i].second.count), 8)
          .right(duration(calls[i].second.ns), 13)
          .write();
    }
  }
}

}  // namespace gtap::core::summary
