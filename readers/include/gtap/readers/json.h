// JSON text from arbitrary bytes: names and arguments come from the traced
// program and may hold anything; the output is always valid JSON in UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace gtap::readers {

// Appends `s` as a JSON string literal (with its quotes).
void appendJsonString(std::string& out, std::string_view s);
// `s` escaped for use inside a JSON string literal (without quotes).
std::string jsonEscape(std::string_view s);

}  // namespace gtap::readers
