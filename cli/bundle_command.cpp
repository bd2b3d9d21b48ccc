// gtap bundle DIR: a self-contained copy of gtap for machines and container
// images that have none of its libraries: bin/gtap (a static launcher that
// checks the system's C library, then runs bin/gtap.bin), lib/gtap/libgtap.so, and
// in lib/gtap/deps every shared library they need that is not part of the C
// library, found from the binaries' own dependencies (DT_NEEDED, resolved as
// the loader resolves them here). gtap and libgtap.so are linked with run
// paths relative to themselves ($ORIGIN/.../lib/gtap/deps, DT_RPATH so that
// it covers their libraries' own dependencies too), so the folder runs from
// any path, read-only. --with-sim adds the simulated runtimes.
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "elf_needs.h"
#include "exit_status.h"
#include "install_paths.h"
#include "output.h"

namespace gtap::cli {

namespace {

namespace fs = std::filesystem;

struct BundleOptions {
  std::string dir;
  bool withSim = false;
};

// The C library's own objects: every system has them, matched to its kernel
// and to each other, so they are never copied. The GPU runtimes are the
// program's (the image's), never gtap's.
bool leftOut(const std::string& soname) {
  static const std::set<std::string> libc = {
      "ld-linux-x86-64.so.2", "libc.so.6",      "libm.so.6",   "libpthread.so.0", "libdl.so.2",
      "librt.so.1",           "libutil.so.1",   "libresolv.so.2", "libanl.so.1", "libmvec.so.1",
      "libBrokenLocale.so.1", "libnsl.so.1",    "libc_malloc_debug.so.0", "libthread_db.so.1"};
  static const std::set<std::string> runtimes = {"libze_loader.so.1", "libhsa-runtime64.so.1"};
  return libc.count(soname) || runtimes.count(soname) || soname.rfind("libnss_", 0) == 0;
}

// "GLIBC_2.34" as (2, 34), for the newest version.
std::pair<int, int> glibcVersion(const std::string& name) {
  int major = 0, minor = 0;
  std::sscanf(name.c_str(), "GLIBC_%d.%d", &major, &minor);
  return {major, minor};
}

// The directories this gtap's own libraries were loaded from: where the
// loader found them for it, so where it finds them for libgtap.so too.
std::vector<std::string> loadedLibraryDirectories() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) {
        auto* out = static_cast<std::vector<std::string>*>(arg);
        if (info->dlpi_name && info->dlpi_name[0] == '/') {
          std::string dir = fs::path(info->dlpi_name).parent_path().string();
          if (std::find(out->begin(), out->end(), dir) == out->end()) out->push_back(dir);
        }
        return 0;
      },
      &dirs);
  return dirs;
}

class Bundler {
 public:
  explicit Bundler(fs::path deps) : deps_(std::move(deps)) {
    system_ = loadedLibraryDirectories();
    for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
                          "/usr/lib", "/usr/local/lib"})
      if (std::find(system_.begin(), system_.end(), d) == system_.end()) system_.push_back(d);
  }

  // Copies every library `object` needs, and theirs, into deps/ once.
  bool add(const fs::path& object, std::string& error) {
    ElfNeeds needs;
    if (!readElfNeeds(object, needs, error)) return false;
    for (const auto& [file, versions] : needs.versions)
      for (const auto& v : versions)
        if (v.rfind("GLIBC_2.", 0) == 0 && (newestGlibc_.empty() || glibcVersion(v) > glibcVersion(newestGlibc_)))
          newestGlibc_ = v;
    for (const auto& soname : needs.needed) {
      if (leftOut(soname) || copied_.count(soname)) continue;
      fs::path found = resolve(soname, needs.searchPath);
      if (found.empty()) {
        error = object.string() + " needs " + soname + ", which is not found in its run path nor in " +
                joined(system_);
        return false;
      }
      copied_.insert(soname);
      std::error_code ec;
      fs::copy_file(fs::canonical(found, ec), deps_ / soname, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        error = "copying " + found.string() + " into " + deps_.string() + ": " + ec.message();
        return false;
      }
      fs::permissions(deps_ / soname, fs::perms(0755), ec);
      if (!add(deps_ / soname, error)) return false;
    }
    return true;
  }

  const std::set<std::string>& copied() const { return copied_; }
  const std::string& newestGlibc() const { return newestGlibc_; }

 private:
  static std::string joined(const std::vector<std::string>& dirs) {
    std::string s;
    for (const auto& d : dirs) s += (s.empty() ? "" : ":") + d;
    return s;
  }
  // As the loader finds it: the object's run path, then the system's
  // directories; only a 64-bit x86-64 object will do.
  fs::path resolve(const std::string& soname, const std::vector<std::string>& runPath) const {
    std::vector<std::string> dirs = runPath;
    dirs.insert(dirs.end(), system_.begin(), system_.end());
    for (const auto& d : dirs) {
      fs::path candidate = fs::path(d) / soname;
      std::error_code ec;
      if (d == deps_.string() || !fs::is_regular_file(candidate, ec)) continue;
      ElfNeeds ignored;
      std::string error;
      if (readElfNeeds(candidate, ignored, error)) return candidate;
    }
    return {};
  }

  fs::path deps_;
  std::vector<std::string> system_;
  std::set<std::string> copied_;
  std::string newestGlibc_;
};

bool copyExecutableFile(const fs::path& from, const fs::path& to, std::string& error) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  fs::copy_file(fs::canonical(from, ec), to, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::permissions(to, fs::perms(0755), ec);
  if (ec) error = "copying " + from.string() + " to " + to.string() + ": " + ec.message();
  return !ec;
}

// A temporary folder beside the target, removed unless it became the target.
struct Staging {
  fs::path path;
  bool kept = false;
  ~Staging() {
    std::error_code ec;
    if (!kept && !path.empty()) fs::remove_all(path, ec);
  }
};

int bundle(const BundleOptions& o) {
  fs::path target = fs::absolute(o.dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(target, ec))) {
    if (!fs::is_directory(fs::symlink_status(target, ec)) || !fs::is_empty(target, ec)) {
      std::cerr << "gtap bundle: " << target.string()
                << " exists and is not an empty directory; give a new one (nothing is replaced)\n";
      return kExitUsage;
    }
  }
  fs::path lib = gtapLibraryDirectory();
  fs::path library = lib / "libgtap.so", launcher = lib / "bundle-launcher";
  for (const auto& needed : {library, launcher})
    if (!fs::exists(needed, ec)) {
      std::cerr << "gtap bundle: " << needed.string() << " not found (is gtap installed whole?)\n";
      return kExitError;
    }
  fs::path sim = lib / "sim";
  if (o.withSim && !fs::exists(sim / "libze_gtap_sim.so", ec)) {
    std::cerr << "gtap bundle: --with-sim: " << simulatedRuntimesMissing("simulated Level Zero driver", sim / "libze_gtap_sim.so")
              << "\n";
    return kExitError;
  }
  Staging staging;
  std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".gtap-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    std::cerr << "gtap bundle: cannot create a folder beside " << target.string() << ": " << std::strerror(errno)
              << "\n";
    return kExitError;
  }
  staging.path = pattern;
  fs::path out = staging.path;
  // The install's layout: lib/gtap where GTAP_RELATIVE_LIBDIR says from bin/.
  // bin/gtap is the static launcher (bundle_launcher.c), which checks the
  // system's C library against lib/gtap/needs-glibc and runs bin/gtap.bin.
  fs::path outExe = out / "bin" / "gtap.bin";
  fs::path outLib = (out / "bin" / GTAP_RELATIVE_LIBDIR).lexically_normal();
  fs::path deps = outLib / "deps";
  fs::create_directories(deps, ec);
  std::string error;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!copyExecutableFile(exe, outExe, error) || !copyExecutableFile(library, outLib / "libgtap.so", error) ||
      !copyExecutableFile(launcher, out / "bin" / "gtap", error) ||
      !copyExecutableFile(launcher, outLib / "bundle-launcher", error)) {
    std::cerr << "gtap bundle: " << error << "\n";
    return kExitError;
  }
  Bundler bundler(deps);
  std::vector<fs::path> objects = {exe, library};
  if (o.withSim) {
    for (const auto& e : fs::recursive_directory_iterator(sim, ec)) {
      if (!e.is_regular_file(ec)) continue;
      fs::path to = outLib / "sim" / e.path().lexically_relative(sim);
      if (!copyExecutableFile(e.path(), to, error)) {
        std::cerr << "gtap bundle: " << error << "\n";
        return kExitError;
      }
      if (e.path().filename().string().find(".so") != std::string::npos) objects.push_back(e.path());
    }
  }
  for (const auto& object : objects)
    if (!bundler.add(object, error)) {
      std::cerr << "gtap bundle: " << error << "\n";
      return kExitError;
    }
  // The C library the launcher asks of the system: the newest version any
  // of the bundle's objects needs.
  if (!bundler.newestGlibc().empty()) {
    std::ofstream needs(outLib / "needs-glibc");
    needs << bundler.newestGlibc().substr(6) << "\n";
    if (!needs.flush()) {
      std::cerr << "gtap bundle: cannot write " << (outLib / "needs-glibc").string() << "\n";
      return kExitError;
    }
  }
  // Put in place whole, or not at all.
  if (fs::exists(target, ec)) fs::remove(target, ec);  // the empty directory checked above
  fs::rename(out, target, ec);
  if (ec) {
    std::cerr << "gtap bundle: cannot put the bundle at " << target.string() << ": " << ec.message() << "\n";
    return kExitError;
  }
  staging.kept = true;
  sayWritten("bundle", target.string());
  std::cerr << "gtap bundle: " << bundler.copied().size() << " libraries in lib/gtap/deps";
  if (!bundler.newestGlibc().empty())
    std::cerr << "; it runs on x86-64 Linux with the C library " << bundler.newestGlibc().substr(6)
              << " or newer";
  std::cerr << ": " << (target / "bin" / "gtap").string() << " run -- PROGRAM\n";
  return kExitSuccess;
}

}  // namespace

Action addBundleCommand(CLI::App& app) {
  auto o = std::make_shared<BundleOptions>();
  auto* cmd = app.add_subcommand(
      "bundle", "A self-contained gtap in a new folder: bin/gtap, lib/gtap/libgtap.so and every library they need "
                "but the C library, for images that have none of them (run it from any path, read-only)");
  cmd->add_option("dir", o->dir, "The folder to make (new, or empty)")->required();
  cmd->add_flag("--with-sim", o->withSim, "Add the simulated Level Zero driver and HSA runtime (for --sim)");
  return [o] { return bundle(*o); };
}

}  // namespace gtap::cli
