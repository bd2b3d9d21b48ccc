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

// gtap's own prefix: the folder above bin/ (the build tree or an install).
inline std::filesystem::path gtapPrefixDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return exe.parent_path().parent_path();
}

// Why --sim cannot work and how to get the simulated runtimes: they are
// built with gtap's tests and installed only on request (component `sim`).
inline std::string simulatedRuntimesMissing(const std::string& what, const std::filesystem::path& where) {
  auto prefix = gtapPrefixDirectory();
  std::error_code ec;
  if (std::filesystem::exists(prefix / "CMakeCache.txt", ec))
    return "the simulated runtimes are not built: no " + what + " at " + where.string() +
           "; they are built with gtap's tests (configure with -DGTAP_BUILD_TESTS=ON, the default, and build all)";
  return "the simulated runtimes are not installed: no " + what + " at " + where.string() +
         "; they are installed only on request, from the build directory gtap was built in: "
         "cmake --install BUILD --component sim --prefix " + prefix.string();
}

// Points the Level Zero loader at gtap's simulated driver (as `gtap run
// --sim`), before the loader is opened. Returns false and sets `error` when
// the driver is not there.
inline bool useSimulatedZeDriver(std::string& error) {
  auto driver = gtapLibraryDirectory() / "sim" / "libze_gtap_sim.so";
  if (!std::filesystem::exists(driver)) {
    error = simulatedRuntimesMissing("simulated Level Zero driver", driver);
    return false;
  }
  setenv("ZE_ENABLE_ALT_DRIVERS", driver.c_str(), 1);
  return true;
}

// The absolute path of gtap's simulated HSA runtime, for a process that
// opens it itself (replay): LD_LIBRARY_PATH is read only when a process
// starts. Returns false and sets `error` when it is not there.
inline bool simulatedHsaRuntime(std::string& path, std::string& error) {
  auto runtime = gtapLibraryDirectory() / "sim" / "hsa" / "libhsa-runtime64.so.1";
  if (!std::filesystem::exists(runtime)) {
    error = simulatedRuntimesMissing("simulated HSA runtime", runtime);
    return false;
  }
  path = runtime.string();
  return true;
}

// Puts gtap's simulated HSA runtime (libhsa-runtime64.so.1) first on the
// library search path, so a program linked with the runtime, or one that
// dlopens it by name, gets the simulated one.
inline bool useSimulatedHsaRuntime(std::string& error) {
  auto dir = gtapLibraryDirectory() / "sim" / "hsa";
  if (!std::filesystem::exists(dir / "libhsa-runtime64.so.1")) {
    error = simulatedRuntimesMissing("simulated HSA runtime", dir / "libhsa-runtime64.so.1");
    return false;
  }
  const char* old = std::getenv("LD_LIBRARY_PATH");
  std::string v = old && *old ? dir.string() + ":" + old : dir.string();
  setenv("LD_LIBRARY_PATH", v.c_str(), 1);
  return true;
}

}  // namespace gtap::cli
