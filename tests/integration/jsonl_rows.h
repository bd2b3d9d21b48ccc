// The rows of one type in the JSON Lines a report or export printed, for the
// integration tests.
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace gtap::test {

inline std::vector<nlohmann::json> jsonlRows(const std::string& out, const std::string& type) {
  std::vector<nlohmann::json> found;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    if (j["type"] == type) found.push_back(j);
  }
  return found;
}

}  // namespace gtap::test
