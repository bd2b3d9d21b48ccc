// Before gtap run execs the program with libgtap.so preloaded: the libraries
// the program itself loads are found before libgtap.so's own (its C++
// runtime, say: an older image's libstdc++.so.6, or one a Python or conda
// environment carries), so one older than libgtap.so needs, or than the
// libraries of a bundle (gtap bundle: deps/ beside libgtap.so) need, would
// make the loader stop the program before it starts. This finds that out
// first, with the loader's own --list, which runs none of the program's code.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gtap::cli {

// Empty when the program would start (or it cannot be told: not a dynamic
// executable, a script); else what is missing, and from which library.
std::string preloadProblem(const std::filesystem::path& library, const std::vector<std::string>& command);

}  // namespace gtap::cli
