// gtap flame on programs with a known call structure
// (tests/workloads/ze/ze_flame: two paths to one kernel, a recursion, an
// inlined helper, a second thread; each path its own group count), checked
// against the capture's own records: the weights test the join of device
// work to stacks and calls, not the clock.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "perfetto_trace.pb.h"
#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

constexpr const char* kLaunch = "(anonymous namespace)::launch((anonymous namespace)::Target&, unsigned int)";
constexpr const char* kTail = ";zeCommandListAppendLaunchKernel;scale [kernel]";

// The stack each group count was launched from, root first, as folded text.
std::map<uint32_t, std::string> expectedPaths() {
  std::string t = "(anonymous namespace)::Target&";
  std::string launch = std::string(";") + kLaunch + kTail;
  return {
      {8, "main;fromPathA(" + t + ")" + launch},
      {16, "main;fromPathB(" + t + ")" + launch},
      {4, "main;recurse(" + t + ", int);recurse(" + t + ", int);recurse(" + t + ", int);recurse(" + t + ", int)" + launch},
      {32, "main;viaInlinedHelper(" + t + ");launchInline [inlined]" + kTail},
      {2, "workerThread(void*)" + launch},  // below the thread's start, whatever libc names it
  };
}

// "path value" lines, each checked against the collapsed-stack grammar the
// tools that read it share (flamegraph.pl, inferno, speedscope): frames
// separated by ';', none empty, then one space and a positive integer.
std::map<std::string, uint64_t> folded(const std::string& text) {
  static const std::regex grammar("[^;\\n]+(;[^;\\n]+)* [1-9][0-9]*");
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(std::regex_match(line, grammar)) << line;
    auto space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    EXPECT_EQ(line.find(';', space), std::string::npos) << line;
    out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return out;
}

// The line whose path ends with `tail` (and is the only one).
std::pair<std::string, uint64_t> lineEndingWith(const std::map<std::string, uint64_t>& lines, const std::string& tail) {
  std::pair<std::string, uint64_t> found;
  size_t matches = 0;
  for (const auto& [path, value] : lines) {
    if (path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) {
      found = {path, value};
      ++matches;
    }
  }
  EXPECT_EQ(matches, 1u) << tail;
  return found;
}

// Kernel slices by the stack they name (frames root first, joined by ';'):
// each path of expectedPaths() above its API call made three of them.
void expectEachPathLaunchedThrice(const std::map<std::string, size_t>& kernelsFrom) {
  for (const auto& [groups, want] : expectedPaths()) {
    std::string stack = want.substr(0, want.size() - std::string(kTail).size());
    size_t n = 0;
    for (const auto& [text, count] : kernelsFrom)
      if (text.size() >= stack.size() && text.compare(text.size() - stack.size(), stack.size(), stack) == 0) n += count;
    EXPECT_EQ(n, 3u) << stack;
  }
}

class Flame : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(freshDirectory("flame"));
    for (const char* name : {"a", "b"}) {
      auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o",
                             *dir_ + "/" + name + ".gtap", "--", workload("ze_flame"), "3"});
      ASSERT_EQ(run.exitCode, 0) << run.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const char* name = "a") { return *dir_ + "/" + name + ".gtap"; }

  static ProcessResult flame(std::vector<std::string> args) {
    std::vector<std::string> argv = {gtapBinary(), "flame"};
    argv.insert(argv.end(), args.begin(), args.end());
    return runProcess(argv);
  }

  // Per group count: device time, operations, and the time of the calls that launched them.
  struct Expected {
    uint64_t deviceNs = 0, count = 0, apiNs = 0;
  };
  static std::map<uint32_t, Expected> fromCapture(const std::string& path) {
    readers::Capture c(path);
    auto work = readers::loadDeviceWork(c);
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> calls;
    c.forEachCallBatch([&](std::span<const readers::ApiCall> batch) {
      for (const auto& call : batch) calls[{call.thread, call.beginIndex}] = call.endNs - call.beginNs;
    });
    std::map<uint32_t, Expected> out;
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      EXPECT_TRUE(op.timed);
      Expected& e = out[op.groupCount[0]];
      e.deviceNs += op.durationNs();
      ++e.count;
      e.apiNs += calls.at({op.thread, op.appendIndex});
    }
    return out;
  }

  static std::string* dir_;
};
std::string* Flame::dir_ = nullptr;

TEST_F(Flame, FoldedStacksAreTheCallPathsWithTheirDeviceTime) {
  auto expected = fromCapture(file());
  ASSERT_EQ(expected.size(), 5u);
  for (const char* weight : {"device", "count", "api"}) {
    SCOPED_TRACE(weight);
    auto r = flame({file(), "-o", "-", std::string("--weight=") + weight});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto lines = folded(r.out);
    size_t kernels = 0;
    for (const auto& [groups, path] : expectedPaths()) {
      auto [line, value] = lineEndingWith(lines, path);
      if (groups != 2) {
        EXPECT_EQ(line, path);  // from main, nothing above it
      } else {
        EXPECT_EQ(line.find("main"), std::string::npos) << line;  // a thread main never called
        EXPECT_GT(line.size(), path.size()) << "the thread's start is its root: " << line;
      }
      const Expected& e = expected.at(groups);
      uint64_t want = std::string(weight) == "device" ? e.deviceNs : std::string(weight) == "count" ? e.count : e.apiNs;
      EXPECT_EQ(value, want) << line;
      EXPECT_EQ(e.count, 3u);
      ++kernels;
    }
    // Besides the launches: the copies the shared allocations never made, nothing.
    size_t others = 0;
    for (const auto& [path, value] : lines) others += path.find("scale [kernel]") == std::string::npos;
    EXPECT_EQ(lines.size(), kernels + others);
    EXPECT_EQ(others, 0u) << r.out;
  }
}

TEST_F(Flame, FiltersAndShapes) {
  auto all = folded(flame({file(), "-o", "-", "--weight=count"}).out);
  // --kernel: a glob over the operation's name.
  EXPECT_EQ(folded(flame({file(), "-o", "-", "--weight=count", "--kernel=sc*"}).out), all);
  auto none = flame({file(), "-o", "-", "--kernel=nothing*"});
  EXPECT_EQ(none.exitCode, 0) << none.err;
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("15 operations outside --kernel, --from or --to left out"), std::string::npos) << none.err;
  // --from beyond the run: nothing; from 0 to far: everything.
  EXPECT_EQ(flame({file(), "-o", "-", "--from=1000"}).out, "");
  EXPECT_EQ(folded(flame({file(), "-o", "-", "--weight=count", "--from=0", "--to=1000"}).out), all);
  // --max-depth=1: only the root frame of each stack stays, so every path
  // from main is one line.
  auto shallow = folded(flame({file(), "-o", "-", "--weight=count", "--max-depth=1"}).out);
  EXPECT_EQ(shallow[std::string("main") + kTail], 12u);
  EXPECT_EQ(shallow.size(), 2u);  // and the thread's
  // --strip-prefix takes the namespace off the front of the names.
  auto stripped = flame({file(), "-o", "-", "--weight=count", "--strip-prefix=(anonymous namespace)::"});
  EXPECT_NE(stripped.out.find(";launch((anonymous namespace)::Target&, unsigned int);"), std::string::npos)
      << stripped.out;
  EXPECT_EQ(stripped.out.find(kLaunch), std::string::npos);
  // Two processes merge; --per-process gives each its own root.
  auto both = folded(flame({file("a"), file("b"), "-o", "-", "--weight=count"}).out);
  for (const auto& [path, value] : all) EXPECT_EQ(both[path], 2 * value) << path;
  auto per = folded(flame({file("a"), file("b"), "-o", "-", "--weight=count", "--per-process"}).out);
  EXPECT_EQ(per.size(), 2 * all.size());
  std::map<std::string, size_t> roots;
  for (const auto& [path, value] : per) ++roots[path.substr(0, path.find(';'))];
  ASSERT_EQ(roots.size(), 2u);
  for (const auto& [root, n] : roots) {
    EXPECT_EQ(root.rfind("pid ", 0), 0u) << root;
    EXPECT_NE(root.find("(ze_flame)"), std::string::npos) << root;
    EXPECT_EQ(n, all.size());
  }
}

TEST_F(Flame, SvgHoldsEveryFrameWithItsShare) {
  std::string svg = *dir_ + "/a.svg";
  auto r = flame({file(), "-o", svg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto lint = runProcess({"xmllint", "--noout", svg});
  EXPECT_EQ(lint.exitCode, 0) << lint.err;
  std::ifstream in(svg);
  std::string text(std::istreambuf_iterator<char>(in), {});
  // No network: nothing refers outside the file.
  EXPECT_EQ(text.find("http://www.w3.org/2000/svg\" width"), text.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(text.find("src="), std::string::npos);
  EXPECT_EQ(text.find("href"), std::string::npos);
  auto expected = fromCapture(file());
  uint64_t total = 0;
  for (const auto& [groups, e] : expected) total += e.deviceNs;
  EXPECT_NE(text.find("data-total=\"" + std::to_string(total) + "\""), std::string::npos);
  EXPECT_NE(text.find("data-name=\"main\" data-kind=\"program\" data-value=\"" +
                      std::to_string(total - expected.at(2).deviceNs) + "\""),
            std::string::npos);
  EXPECT_NE(text.find("data-name=\"launchInline [inlined]\""), std::string::npos);
  EXPECT_NE(text.find("data-kind=\"API call\""), std::string::npos);
  EXPECT_NE(text.find("data-kind=\"device work\""), std::string::npos);
  // Frames: one per node of the tree the folded paths make.
  auto lines = folded(flame({file(), "-o", "-"}).out);
  std::set<std::string> prefixes;
  for (const auto& [path, value] : lines)
    for (size_t at = path.find(';'); ; at = path.find(';', at + 1)) {
      prefixes.insert(path.substr(0, at));
      if (at == std::string::npos) break;
    }
  size_t frames = 0;
  for (size_t at = text.find("<g class=\"f\""); at != std::string::npos; at = text.find("<g class=\"f\"", at + 1)) ++frames;
  EXPECT_EQ(frames, prefixes.size());
  // A minimum width no frame reaches: none drawn, and the picture says so.
  auto narrow = flame({file(), "-o", *dir_ + "/narrow.svg", "--min-width=2000"});
  ASSERT_EQ(narrow.exitCode, 0) << narrow.err;
  std::ifstream n(*dir_ + "/narrow.svg");
  std::string narrowText(std::istreambuf_iterator<char>(n), {});
  EXPECT_EQ(narrowText.find("<g class=\"f\""), std::string::npos);
  EXPECT_NE(narrowText.find("frames narrower than 2000.00 px left out (100.00% of the weight)"), std::string::npos);
}

// Thousands of distinct stacks (ze_flame_paths 12: 4,096 launches, each
// through its own path 24 frames deep): each is a line of the folded text; the
// SVG draws runs of siblings too narrow to see as one frame each, and says
// how many frames it drew so and left out.
TEST_F(Flame, ThousandsOfDistinctStacks) {
  std::string path = *dir_ + "/paths.gtap";
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", path, "--",
                         workload("ze_flame_paths"), "12"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto r = flame({path, "-o", "-", "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto lines = folded(r.out);
  EXPECT_EQ(lines.size(), 4096u);
  for (const auto& [line, value] : lines) EXPECT_EQ(value, 1u) << line;
  std::string svg = *dir_ + "/paths.svg";
  ASSERT_EQ(flame({path, "-o", svg, "--weight=count", "--min-width=1"}).exitCode, 0);
  std::ifstream in(svg);
  std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(runProcess({"xmllint", "--noout", svg}).exitCode, 0);
  EXPECT_NE(text.find("data-kind=\"several frames\""), std::string::npos);
  EXPECT_NE(text.find("px drawn as runs of siblings"), std::string::npos);
  // Every row's frames add up to no more than the whole, the bottom row to all of it.
  std::map<int, uint64_t> byDepth;
  std::regex frame("data-depth=\"([0-9]+)\"[^>]*data-value=\"([0-9]+)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), frame); it != std::sregex_iterator(); ++it)
    byDepth[std::stoi((*it)[1])] += std::stoull((*it)[2]);
  ASSERT_FALSE(byDepth.empty());
  EXPECT_EQ(byDepth.at(0), 4096u);
  for (const auto& [depth, sum] : byDepth) EXPECT_LE(sum, 4096u) << depth;
}

// The HTML page holds the graph and each leaf's weight per 20 ms slice as
// data its script reads: the slices add up to the graph's weight, per leaf.
TEST_F(Flame, HtmlHoldsTheWeightBySlice) {
  std::string html = *dir_ + "/a.html";
  auto r = flame({file(), "-o", html, "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::ifstream in(html);
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto at = text.find("var DATA = ");
  ASSERT_NE(at, std::string::npos);
  auto end = text.find(";\n(function", at);
  ASSERT_NE(end, std::string::npos);
  auto data = nlohmann::json::parse(text.substr(at + 11, end - at - 11));
  EXPECT_EQ(data["sliceNs"], 20000000);
  std::map<uint64_t, uint64_t> byLeaf;
  uint64_t total = 0;
  for (const auto& s : data["slices"]) {
    byLeaf[s[0].get<uint64_t>()] += s[2].get<uint64_t>();
    total += s[2].get<uint64_t>();
  }
  EXPECT_EQ(total, 15u);
  EXPECT_EQ(byLeaf.size(), 5u);  // the five paths
  for (const auto& [node, weight] : byLeaf) {
    EXPECT_EQ(weight, 3u);
    // A leaf is the kernel.
    auto frame = data["nodes"][node][0].get<size_t>();
    EXPECT_EQ(data["frames"][frame][0], "scale [kernel]");
  }
  EXPECT_EQ(text.find("<script src"), std::string::npos);  // nothing from the network
}

// The record exports carry the same stacks: JSON Lines a stack id on each
// launch and a row per stack; SQLite stack_frames and frames, joined from
// device_ops, so SQL groups device time by function the way the flame graph
// does.
TEST_F(Flame, RecordExportsCarryTheStacks) {
  auto expected = fromCapture(file());
  auto lines = runProcess({gtapBinary(), "export", "--format=jsonl", "-o", "-", file()});
  ASSERT_EQ(lines.exitCode, 0) << lines.err;
  std::map<int64_t, std::vector<std::string>> stacks;  // id -> frame names, root first
  std::vector<nlohmann::json> launches;
  std::istringstream in(lines.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "stack")
      for (const auto& f : j["frames"]) stacks[j["id"]].push_back(f["name"]);
    else if (j["type"] == "device" && j["kind"] == "kernel")
      launches.push_back(j);
  }
  ASSERT_EQ(launches.size(), 15u);
  for (const auto& l : launches) {
    ASSERT_TRUE(l.contains("stack")) << l;
    const auto& frames = stacks.at(l["stack"]);
    std::string path;
    for (const auto& f : frames) path += (path.empty() ? "" : ";") + f;
    std::string want = expectedPaths().at(l["groups"][0].get<uint32_t>());
    want = want.substr(0, want.size() - std::string(kTail).size());  // the stack ends above the call
    EXPECT_TRUE(path.size() >= want.size() && path.compare(path.size() - want.size(), want.size(), want) == 0)
        << path << " should end with " << want;
  }
  std::string db = *dir_ + "/stacks.db";
  auto exported = runProcess({gtapBinary(), "export", "--format=sqlite", "-o", db, file()});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto byFunction = queryCounts(handle,
      "SELECT f.name, SUM(d.end_ns - d.start_ns) FROM device_ops d "
      "JOIN stack_frames s ON s.process_id = d.process_id AND s.stack = d.stack "
      "JOIN frames f ON f.id = s.frame_id WHERE d.kind = 'kernel' GROUP BY f.name");
  EXPECT_EQ(byFunction.at("fromPathA((anonymous namespace)::Target&)"), static_cast<int64_t>(expected.at(8).deviceNs));
  EXPECT_EQ(byFunction.at("launchInline [inlined]"), static_cast<int64_t>(expected.at(32).deviceNs));
  // The launching call, joined by thread and call index.
  auto byCall = queryCounts(handle,
      "SELECT s.string, COUNT(*) FROM device_ops d JOIN api_calls a ON a.process_id = d.process_id "
      "AND a.thread = d.thread AND a.call_index = d.call_index JOIN strings s ON s.id = a.function_id "
      "WHERE d.kind = 'kernel' GROUP BY s.string");
  EXPECT_EQ(byCall, (Counts{{"zeCommandListAppendLaunchKernel", 15}}));
  sqlite3_close(handle);
}

// The Perfetto export gives each launch's call slice and device slice the
// callstack it was launched from, interned as Perfetto interns them (frames
// by function name, callstacks outermost frame first).
TEST_F(Flame, PerfettoSlicesCarryTheirCallstacks) {
  std::string path = *dir_ + "/a.pftrace";
  auto r = runProcess({gtapBinary(), "export", "--format=perfetto", "--force", "-o", path, file()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::ifstream in(path, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  std::map<uint64_t, std::string> functions;
  std::map<uint64_t, uint64_t> frameFunction;
  std::map<uint64_t, std::string> callstacks;  // iid -> frames joined by ';'
  size_t internedPackets = 0;
  for (const auto& p : trace.packet()) {
    if (!p.has_interned_data()) continue;
    ++internedPackets;
    const auto& d = p.interned_data();
    for (const auto& f : d.function_names()) functions[f.iid()] = f.str();
    for (const auto& f : d.frames()) frameFunction[f.iid()] = f.function_name_id();
    for (const auto& c : d.callstacks()) {
      std::string text;
      for (uint64_t f : c.frame_ids()) text += (text.empty() ? "" : ";") + functions.at(frameFunction.at(f));
      callstacks[c.iid()] = text;
    }
  }
  EXPECT_EQ(internedPackets, 1u);
  std::map<std::string, size_t> kernelsFrom, callsFrom;  // stack -> slices
  for (const auto& p : trace.packet()) {
    if (!p.has_track_event() || p.track_event().type() != perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN) continue;
    const auto& e = p.track_event();
    if (e.name() != "scale" && e.name() != "zeCommandListAppendLaunchKernel") continue;
    ASSERT_NE(e.callstack_iid(), 0u) << e.name();
    (e.name() == "scale" ? kernelsFrom : callsFrom)[callstacks.at(e.callstack_iid())]++;
  }
  EXPECT_EQ(kernelsFrom, callsFrom);
  ASSERT_EQ(kernelsFrom.size(), 5u);
  expectEachPathLaunchedThrice(kernelsFrom);
}

// Chrome JSON gives the same stacks as the format's "stackFrames" (a tree of
// frames, each naming its parent), each launch's slices naming their
// innermost frame ("sf").
TEST_F(Flame, ChromeSlicesNameTheirStackFrames) {
  auto r = runProcess({gtapBinary(), "export", "--format=chrome", "-o", "-", file()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& frames = doc.at("stackFrames");
  std::map<std::string, size_t> kernelsFrom, callsFrom;
  for (const auto& e : doc.at("traceEvents")) {
    if (e["ph"] != "X" || (e["name"] != "scale" && e["name"] != "zeCommandListAppendLaunchKernel")) continue;
    ASSERT_TRUE(e.contains("sf")) << e;
    std::vector<std::string> path;
    for (std::string node = e["sf"]; !node.empty();) {
      const auto& f = frames.at(node);
      path.insert(path.begin(), f["name"].get<std::string>());
      node = f.contains("parent") ? f["parent"].get<std::string>() : "";
    }
    std::string text;
    for (const auto& p : path) text += (text.empty() ? "" : ";") + p;
    (e["name"] == "scale" ? kernelsFrom : callsFrom)[text]++;
  }
  EXPECT_EQ(kernelsFrom, callsFrom);
  expectEachPathLaunchedThrice(kernelsFrom);
}

TEST_F(Flame, BadArgumentsAndTargetsAreRefused) {
  auto unknown = flame({file(), "-o", *dir_ + "/out.png"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("cannot tell the format from"), std::string::npos) << unknown.err;
  EXPECT_EQ(flame({file(), "-o", "-", "--weight=time"}).exitCode, 2);
  EXPECT_EQ(flame({file(), "-o", "-", "--format=png"}).exitCode, 2);
  EXPECT_EQ(flame({file(), "-o", "-", "--from=2", "--to=1"}).exitCode, 2);
  // An existing output is kept unless --force.
  std::string kept = *dir_ + "/kept.folded";
  { std::ofstream(kept) << "mine\n"; }
  auto refused = flame({file(), "-o", kept});
  EXPECT_NE(refused.exitCode, 0);
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  std::ifstream in(kept);
  std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(text, "mine\n");
  EXPECT_EQ(flame({file(), "-o", kept, "--force"}).exitCode, 0);
  // A file that is not a capture is named, and nothing is written.
  auto bad = flame({kept, "-o", *dir_ + "/never.folded"});
  EXPECT_NE(bad.exitCode, 0);
  EXPECT_NE(bad.err.find(kept), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ + "/never.folded"));
}

// Without mode stacks each launch is under [no stack], and the reader says
// how to record them.
TEST_F(Flame, CapturesWithoutStacksSaySo) {
  std::string path = *dir_ + "/nostacks.gtap";
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels", "-o", path, "--", workload("ze_flame"), "1"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto r = flame({path, "-o", "-", "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(folded(r.out), (std::map<std::string, uint64_t>{{std::string("[no stack]") + kTail, 5}}));
  EXPECT_NE(r.err.find("record them with --mode=api,kernels,stacks"), std::string::npos) << r.err;
}

// A stripped program: without its debug file each of its frames reads
// ze_flame+0xOFFSET (none dropped, the paths as many and as heavy); with the
// file found by build-id (--debug-dir, GTAP_DEBUG_PATH) the graph is the one
// of the unstripped program.
TEST_F(Flame, StrippedProgramsAreNamedFromTheirDebugFile) {
  std::string dir = freshDirectory("flame-stripped");
  std::string stripped = strippedWithDebugFile(workload("ze_flame"), dir);
  ASSERT_NE(stripped, "");
  std::string capture = dir + "/cap.gtap";
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", capture, "--", stripped, "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto bare = runProcess({gtapBinary(), "flame", capture, "-o", "-", "--weight=count"}, {}, {"GTAP_DEBUG_PATH"});
  ASSERT_EQ(bare.exitCode, 0) << bare.err;
  auto unnamed = folded(bare.out);
  EXPECT_EQ(unnamed.size(), 5u) << bare.out;
  for (const auto& [line, value] : unnamed) {
    EXPECT_EQ(value, 3u) << line;
    EXPECT_EQ(line.find("fromPath"), std::string::npos) << line;
  }
  EXPECT_NE(bare.out.find("ze_flame+0x"), std::string::npos) << bare.out;
  auto named = folded(flame({file(), "-o", "-", "--weight=count"}).out);
  auto viaOption = runProcess({gtapBinary(), "flame", capture, "-o", "-", "--weight=count", "--debug-dir", dir + "/debug"},
                              {}, {"GTAP_DEBUG_PATH"});
  ASSERT_EQ(viaOption.exitCode, 0) << viaOption.err;
  EXPECT_EQ(folded(viaOption.out), named);
  auto viaEnv = runProcess({gtapBinary(), "flame", capture, "-o", "-", "--weight=count"},
                           {{"GTAP_DEBUG_PATH", dir + "/debug"}});
  EXPECT_EQ(folded(viaEnv.out), named);
}

// IREE HAL dispatches sit between the API call and the kernel they became.
TEST_F(Flame, HalDispatchesAreBetweenTheCallAndTheKernel) {
  std::string path = *dir_ + "/hal.gtap";
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", path, "--",
                         workload("hal_on_hsa"), "3"},
                        {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto r = flame({path, "-o", "-", "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  uint64_t joined = 0, warmup = 0;
  for (const auto& [line, value] : folded(r.out)) {
    if (line.find(";vector_add [hal];vector_add [kernel]") != std::string::npos ||
        line.find(";scale [hal];scale [kernel]") != std::string::npos)
      joined += value;
    else if (line.find("scale [kernel]") != std::string::npos)
      warmup += value;
  }
  EXPECT_EQ(joined, 10u) << r.out;  // A: 3 dispatches x 3 rounds, B: 1
  EXPECT_EQ(warmup, 1u) << r.out;   // the driver's own warm-up: no HAL dispatch made it
}

}  // namespace
}  // namespace gtap::test
