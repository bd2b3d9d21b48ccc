// Opening a file a reader is given or a capture names: hostile until checked.
#pragma once

#include <sys/stat.h>

#include <string>

namespace gtap::format {

// Opens `path` read-only without blocking (a FIFO with no writer, a terminal
// or a device is refused at once rather than waited on) and refuses anything
// but a regular file. Returns the descriptor, in blocking mode again, with
// `st` filled; or -1 with `error` saying why ("not a regular file (a FIFO)",
// or the system's reason).
int openRegularFile(const std::string& path, struct stat& st, std::string& error);

// "a FIFO", "a socket", "a character device", ... for a stat mode.
std::string fileTypeName(unsigned mode);

}  // namespace gtap::format
