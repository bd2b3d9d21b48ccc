// Where gtap's own files are, relative to the gtap executable (the build tree
// has the install tree's shape): libgtap.so and the simulated drivers.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gtap::cli {

inline std::filesystem::path gtapLibraryDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path() / GTAP_RELATIVE_LIBDIR).lexically_normal();
}

// Points the Level Zero loader at gtap's simulated driver (as `gtap run
// --sim`), before the loader is opened. Returns false and sets `error` when
// the driver is not there.
inline bool useSimulatedZeDriver(std::string& error) {
  auto driver = gtapLibraryDirectory() / "sim" / "libze_gtap_sim.so";
  if (!std::filesystem::exists(driver)) {
    error = "the simulated Level Zero driver is not at " + driver.string() + " (built with tests enabled)";
    return false;
  }
  setenv("ZE_ENABLE_ALT_DRIVERS", driver.c_str(), 1);
  return true;
}

// Puts gtap's simulated HSA runtime (libhsa-runtime64.so.1) first on the
// library search path, so a program linked with the runtime, or one that
// dlopens it by name, gets the simulated one.
inline bool useSimulatedHsaRuntime(std::string& error) {
  auto dir = gtapLibraryDirectory() / "sim" / "hsa";
  if (!std::filesystem::exists(dir / "libhsa-runtime64.so.1")) {
    error = "the simulated HSA runtime is not in " + dir.string() + " (built with tests enabled)";
    return false;
  }
  const char* old = std::getenv("LD_LIBRARY_PATH");
  std::string v = old && *old ? dir.string() + ":" + old : dir.string();
  setenv("LD_LIBRARY_PATH", v.c_str(), 1);
  return true;
}

}  // namespace gtap::cli
