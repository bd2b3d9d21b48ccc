// Help for people and for agents, from the binary itself: the README's
// tables as `gtap help TOPIC`, and `gtap --agents_md`, a Markdown playbook of
// every verb and option, the JSON Lines row types and their fields, recipes
// and the same tables.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace gtap::cli {

// Each topic's name and text, in the README's order.
std::vector<std::pair<std::string, std::string>> helpTopics();

// The playbook for `app` (every verb it has).
std::string agentsMarkdown(const CLI::App& app);

}  // namespace gtap::cli
