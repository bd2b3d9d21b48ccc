// Help from the binary itself: `gtap --agents_md` names every verb the CLI
// has with every option its --help lists, and documents every JSON Lines
// row type and field the reports and exports write on real captures; `gtap
// help TOPIC` prints exactly the README's table.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "process.h"

namespace gtap::test {
namespace {

ProcessResult gtap(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The verbs `gtap --help` lists.
std::vector<std::string> verbs() {
  auto help = gtap({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  std::vector<std::string> out;
  bool in = false;
  for (const auto& line : linesOf(help.out)) {
    if (line == "Subcommands:") {
      in = true;
      continue;
    }
    if (!in) continue;
    if (line.empty()) break;
    std::istringstream words(line);
    std::string verb;
    words >> verb;
    out.push_back(verb);
  }
  return out;
}

// The agents text of one verb: from its heading to the next.
std::string section(const std::string& md, const std::string& verb) {
  std::string heading = "### `gtap " + verb + "`\n";
  size_t at = md.find(heading);
  if (at == std::string::npos) return {};
  size_t end = md.find("\n### ", at + heading.size());
  size_t next = md.find("\n## ", at + heading.size());
  return md.substr(at, std::min(end, next) - at);
}

TEST(Help, AgentsMdNamesEveryVerbAndItsOptions) {
  auto md = gtap({"--agents_md"});
  ASSERT_EQ(md.exitCode, 0) << md.err;
  auto all = verbs();
  ASSERT_GE(all.size(), 16u) << "gtap --help lists the verbs";
  for (const auto& verb : all) {
    SCOPED_TRACE(verb);
    std::string text = section(md.out, verb);
    ASSERT_FALSE(text.empty()) << "no section for " << verb;
    // Every long option the verb's own help shows is in its section.
    auto help = gtap({verb, "--help"});
    ASSERT_EQ(help.exitCode, 0) << help.err;
    std::regex longOption(R"((--[a-z][a-z0-9-]*))");
    for (const auto& line : linesOf(help.out)) {
      if (line.rfind("  -", 0) != 0) continue;  // option lines only
      std::smatch m;
      std::string first = line.substr(0, line.find("  ", 2));
      if (!std::regex_search(first, m, longOption) || m[1] == "--help") continue;
      EXPECT_NE(text.find(m[1].str()), std::string::npos) << m[1] << " of " << verb << " missing:\n" << text;
    }
  }
  for (const char* part : {"## JSON Lines rows", "## Recipes", "gtap diff --format=jsonl --fail-above",
                           "## environment", "GTAP_MODE", "## exit"})
    EXPECT_NE(md.out.find(part), std::string::npos) << part;
}

TEST(Help, TopicsAreTheReadmeTables) {
  std::ifstream in(std::string(GTAP_TEST_SOURCE_DIR) + "/README.md");
  std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto list = gtap({"help"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  size_t topics = 0;
  for (const std::string topic : {"exit", "run-options", "environment", "modes", "output"}) {
    SCOPED_TRACE(topic);
    EXPECT_NE(list.out.find(" " + topic), std::string::npos) << list.out;
    std::string open = "<!-- help: " + topic + " -->\n";
    size_t at = readme.find(open);
    ASSERT_NE(at, std::string::npos);
    size_t end = readme.find("<!-- /help -->", at);
    auto r = gtap({"help", topic});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, readme.substr(at + open.size(), end - at - open.size()));
    EXPECT_EQ(r.out.rfind("| ", 0), 0u) << "a table";
    ++topics;
  }
  EXPECT_EQ(topics, 5u);
  auto verb = gtap({"help", "kernels"});
  ASSERT_EQ(verb.exitCode, 0);
  EXPECT_NE(verb.out.find("--by"), std::string::npos) << verb.out;
  auto unknown = gtap({"help", "colours"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("'colours'"), std::string::npos) << unknown.err;
}

// Each documented row type's fields, from the agents text's list lines:
// - `TYPE` (verbs): `a`, `b`, `mean_<counter>`. Meaning.
std::map<std::string, std::vector<std::regex>> documentedRows(const std::string& md) {
  std::map<std::string, std::vector<std::regex>> rows;
  std::regex item(R"(^- `([a-z_]+)` \([^)]*\): (.*)$)");
  std::regex field("`([^`]+)`");
  size_t at = md.find("## JSON Lines rows");
  size_t end = md.find("\n## ", at + 1);
  for (const auto& line : linesOf(md.substr(at, end - at))) {
    std::smatch m;
    if (!std::regex_match(line, m, item)) continue;
    auto& fields = rows[m[1]];
    std::string rest = m[2];
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), field); it != std::sregex_iterator(); ++it) {
      // `<name>` stands for names from the capture.
      std::string f = (*it)[1];
      f = std::regex_replace(f, std::regex("<[a-z]+>"), ".+");
      fields.emplace_back("^" + f + "$");
    }
  }
  return rows;
}

TEST(Help, EveryJsonLinesRowTypeAndFieldIsDocumented) {
  auto md = gtap({"--agents_md"});
  ASSERT_EQ(md.exitCode, 0);
  auto documented = documentedRows(md.out);
  ASSERT_GT(documented.size(), 30u);
  std::string dir = freshDirectory("help-rows");
  std::string ze = dir + "/ze.gtap", hsa = dir + "/hsa.gtap", replay = dir + "/replay.gtap";
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory,stacks", "--counters", "ComputeBasic",
                  "--metrics-interval", "1", "-o", ze, "--", workload("ze_pipeline")}).exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "api,kernels,memory", "--counters", "SQ_WAVES,GRBM_COUNT", "-o", hsa,
                  "--", workload("hsa_pipeline")}).exitCode, 0);
  ASSERT_EQ(gtap({"run", "--sim", "-q", "-m", "replay", "-o", replay, "--", workload("ze_vector_add"), "2", "256"})
                .exitCode, 0);
  // The live set as the first allocation was made holds it.
  auto events = gtap({"memory", "--format=jsonl", "--events", ze});
  ASSERT_EQ(events.exitCode, 0) << events.err;
  ASSERT_FALSE(linesOf(events.out).empty());
  char firstAllocation[32];
  std::snprintf(firstAllocation, sizeof firstAllocation, "%.9f",
                nlohmann::json::parse(linesOf(events.out)[0])["time"].get<int64_t>() / 1e9);
  std::vector<std::vector<std::string>> runs = {
      {"api", ze, hsa},
      {"kernels", ze, hsa},
      {"kernels", "--per-process", "--by=queue", ze, hsa},
      {"kernels", "--by=shape", ze},
      {"kernels", "--counters", ze},
      {"memory", "--per-process", ze, hsa},
      {"memory", "--events", ze, hsa},
      {"memory", "--at", firstAllocation, ze},
      {"queue", ze, hsa},
      {"command", ze},
      {"command", "--id", "8", ze},
      {"summary", ze, hsa},
      {"explain", ze, hsa},
      {"info", ze, hsa},
      {"executables", ze, hsa},
      {"counters", ze, hsa},
      {"counters", "--per-dispatch", ze, hsa},
      {"counters", "--device-metrics", ze},
      {"counters", "--list", "--sim"},
      {"diff", ze, hsa},
      {"dump", replay},
      {"export", "-o", "-", ze, hsa},
  };
  std::set<std::string> seen;
  for (auto args : runs) {
    args.insert(args.begin() + 1, "--format=jsonl");
    std::string what;
    for (const auto& a : args) what += a + " ";
    SCOPED_TRACE(what);
    auto r = gtap(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    size_t rows = 0;
    for (const auto& line : linesOf(r.out)) {
      auto j = nlohmann::ordered_json::parse(line);
      ASSERT_TRUE(j.is_object()) << line;
      ASSERT_TRUE(j.contains("type")) << line;
      ASSERT_EQ(j.begin().key(), "type") << "type comes first: " << line;
      std::string type = j["type"];
      seen.insert(type);
      ++rows;
      auto doc = documented.find(type);
      ASSERT_NE(doc, documented.end()) << "row type " << type << " is not in --agents_md";
      if (type == "record") continue;  // a replay record's fields are its operation's
      for (const auto& [key, value] : j.items()) {
        if (key == "type") continue;
        bool found = false;
        for (const auto& pattern : doc->second) found |= std::regex_match(key, pattern);
        EXPECT_TRUE(found) << "field " << key << " of " << type << " is not in --agents_md";
      }
    }
    EXPECT_GT(rows, 0u);
  }
  for (const char* type : {"api_function", "kernel", "allocation", "transfer", "process_summary", "top_kernel",
                           "capture", "explain_process", "explain_launch", "executable_kernel", "kernel_counter",
                           "dispatch_counter", "device_metric_summary", "offered_counter", "diff", "record",
                           "summary", "schema", "process", "api", "device", "memory", "level", "copy_direction",
                           "counter_set", "counters", "device_metric", "stack"})
    EXPECT_TRUE(seen.count(type)) << type << " never came";
}

}  // namespace
}  // namespace gtap::test
