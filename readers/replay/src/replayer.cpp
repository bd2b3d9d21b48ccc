#include "gtap/readers/replayer.h"

#include <optional>
#include <set>

#include "gtap/readers/replay_fields.h"
#include "hsa_session.h"
#include "hsa_substitution.h"
#include "session.h"
#include "setup.h"
#include "substitution.h"

namespace gtap::readers {

namespace {

using O = ReplayOp;

// Which part of a replay performs a record.
enum class Family : uint8_t { unsupported, levelZero, hsa, scope };

bool isHsaOperation(ReplayOp op) {
  auto v = static_cast<unsigned>(op);
  return v >= static_cast<unsigned>(O::HSA_AGENT) && v <= static_cast<unsigned>(O::HSA_FILL);
}

bool numericSelector(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Whether `selector` names a Level Zero module of the stream.
bool selectsModule(const ReplayStream& stream, const std::string& selector) {
  for (const auto& r : stream.records) {
    if (r.op == O::MODULE_CREATE &&
        (selector == "all" ||
         (numericSelector(selector) && std::to_string(r.fields.getModuleCreate().getModule()) == selector)))
      return true;
    if (!numericSelector(selector) && r.op == O::KERNEL_CREATE && r.fields.getKernelCreate().getName() == selector)
      return true;
  }
  return false;
}

}  // namespace

struct Replayer::Impl {
  replay::ReplaySetup setup;
  bool validated = false;
  bool prepared = false;
  bool hsaInitialized = false;
  std::vector<Family> families;  // by record
  bool levelZero = false, hsa = false;  // the stream holds records of that runtime
  // During run().
  replay::Session* zeSession = nullptr;
  replay::HsaSession* hsaSession = nullptr;

  ~Impl() {
    if (hsaInitialized) setup.hsa->hsa_shut_down();
  }

  // Host data and read-backs go to the part that made their memory or copy.
  void classify() {
    const auto& records = setup.stream->records;
    std::set<uint64_t> hsaMade;
    for (const auto& r : records)
      if (isHsaOperation(r.op) && createsObject(r.op)) hsaMade.insert(createdObject(r));
    auto copyFamily = [&](uint64_t seq) {
      auto at = setup.stream->find(seq);
      return at && records[*at].op == O::HSA_COPY ? Family::hsa : Family::levelZero;
    };
    families.assign(records.size(), Family::levelZero);
    for (size_t i = 0; i < records.size(); ++i) {
      const ReplayRecord& r = records[i];
      Family& f = families[i];
      switch (r.op) {
        case O::UNSUPPORTED: f = Family::unsupported; break;
        case O::SCOPE_BEGIN:
        case O::SCOPE_END: f = Family::scope; break;
        case O::HOST_DATA: {
          auto h = r.fields.getHostData();
          f = h.isAllocation() ? (hsaMade.count(h.getAllocation()) ? Family::hsa : Family::levelZero)
                               : copyFamily(h.getCopy());
          break;
        }
        case O::READ_BACK: {
          auto b = r.fields.getReadBack();
          f = b.getAllocation() ? Family::hsa : copyFamily(b.getCopy());
          break;
        }
        default: f = isHsaOperation(r.op) ? Family::hsa : Family::levelZero;
      }
      levelZero |= f == Family::levelZero;
      hsa |= f == Family::hsa;
    }
  }
};

Replayer::Replayer(const Capture& capture, const ReplayStream& stream, ReplayOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->setup.capture = &capture;
  impl_->setup.stream = &stream;
  impl_->setup.options = std::move(options);
}

Replayer::~Replayer() = default;

const std::vector<std::string>& Replayer::warnings() const { return impl_->setup.warnings; }

void Replayer::validate() {
  auto& s = impl_->setup;
  const std::string& file = s.capture->path();
  if (!s.stream->complete)
    throw ReplayError(file + ": the replay stream is cut short and cannot be replayed faithfully: " +
                      s.stream->cutDescription);
  std::string unsupported;
  std::set<std::string> scopes;
  for (const auto& r : s.stream->records) {
    if (r.op == readers::ReplayOp::UNSUPPORTED)
      unsupported += "\n  seq " + std::to_string(r.seq) + " " +
                     (r.function == ~0u ? std::string("-") : s.capture->functionName(r.function)) + ": " +
                     r.fields.getUnsupported().getReason().cStr();
    if (r.op == readers::ReplayOp::SCOPE_BEGIN) scopes.insert(r.fields.getScopeBegin().getScope());
  }
  if (!unsupported.empty())
    throw ReplayError(file + ": the stream holds calls replay cannot reproduce (unsupported records):" + unsupported);
  for (const auto& name : s.options.requiredScopes) {
    if (scopes.count(name)) continue;
    std::string known;
    for (const auto& k : scopes) known += (known.empty() ? "" : ", ") + k;
    throw ReplayError(file + ": the stream has no scope named " + name +
                      (known.empty() ? std::string(" (it has no scopes)") : " (its scopes: " + known + ")"));
  }
  impl_->classify();
  if (s.options.device && !impl_->hsa)
    throw ReplayError(file + ": --device " + std::to_string(*s.options.device) +
                      " chooses the GPU agent HSA work replays on, and this stream holds no HSA records (Level Zero "
                      "devices replay on the device with the captured driver and device index)");
  s.payloads.resolve(*s.capture, *s.stream, s.options.remaps, s.options.verify);
  impl_->validated = true;
}

void Replayer::prepare() {
  if (!impl_->validated) validate();
  auto& s = impl_->setup;
  const std::string& file = s.capture->path();
  // Each --substitute goes to the runtime whose code it names; one that
  // names nothing is refused by the Level Zero check (or here).
  std::vector<ModuleSubstitution> zeSubstitutions, hsaSubstitutions;
  for (const auto& sub : s.options.substitutions) {
    bool hsa = impl_->hsa && replay::selectsHsaCodeObject(*s.stream, sub.selector);
    bool ze = selectsModule(*s.stream, sub.selector);
    if (hsa) hsaSubstitutions.push_back(sub);
    if (ze || (!hsa && impl_->levelZero)) zeSubstitutions.push_back(sub);
    if (!hsa && !ze && !impl_->levelZero)
      throw ReplayError(file + ": --substitute " + sub.selector + "=" + sub.path + ": " +
                        (sub.selector == "all"         ? std::string("the stream loads no code object")
                         : numericSelector(sub.selector) ? "the stream makes no code object with id " + sub.selector
                                                         : "the stream has no kernel named " + sub.selector));
  }
  if (impl_->levelZero) {
    try {
      s.ze = &replay::loadZeFunctions();
    } catch (const std::exception& e) {
      throw ReplayError(file + ": " + e.what());
    }
    s.devices = replay::mapDevices(*s.ze, *s.capture, *s.stream, s.warnings);
    s.moduleBinaries = replay::checkSubstitutions(s, zeSubstitutions);
  }
  if (impl_->hsa) {
    std::string runtime = s.options.hsaRuntime.empty() ? replay::kDefaultHsaRuntime : s.options.hsaRuntime;
    try {
      s.hsa = &replay::loadHsaFunctions(runtime);
    } catch (const std::exception& e) {
      throw ReplayError(file + ": " + e.what());
    }
    hsa_status_t status = s.hsa->hsa_init();
    if (status != HSA_STATUS_SUCCESS)
      throw ReplayError(file + ": hsa_init of " + runtime + " returned " + replay::hsaStatusName(*s.hsa, status) +
                        " (no HSA device, or /dev/kfd not accessible?)");
    impl_->hsaInitialized = true;
    s.hsaAgents = replay::mapHsaAgents(*s.hsa, *s.capture, *s.stream, s.options.device, s.warnings);
    auto checked = replay::checkHsaSubstitutions(s, hsaSubstitutions);
    s.codeObjectBinaries = std::move(checked.binaries);
    s.checkedKernels = std::move(checked.checkedKernels);
    s.uncheckedKernels = std::move(checked.uncheckedKernels);
  }
  impl_->prepared = true;
}

ReplayResult Replayer::run(const ReplayCallbacks& callbacks) {
  auto& s = impl_->setup;
  if (!impl_->prepared) throw ReplayError(s.capture->path() + ": replay run before prepare");
  ReplayResult result;
  {
    // Destroyed (everything they made with them) before the result is
    // returned, and when a record fails.
    std::optional<replay::Session> ze;
    std::optional<replay::HsaSession> hsa;
    if (impl_->levelZero) ze.emplace(s, result);
    if (impl_->hsa) hsa.emplace(s, result);
    impl_->zeSession = ze ? &*ze : nullptr;
    impl_->hsaSession = hsa ? &*hsa : nullptr;
    try {
      const auto& records = s.stream->records;
      for (size_t i = 0; i < records.size(); ++i) {
        const ReplayRecord& r = records[i];
        // A batch of HSA packets ends where another runtime's record, a
        // scope or a refusal comes.
        if (hsa && impl_->families[i] != Family::hsa) hsa->ringDoorbells();
        switch (impl_->families[i]) {
          case Family::levelZero: ze->perform(r, i); break;
          case Family::hsa: hsa->perform(r, i); break;
          case Family::scope:
            if (r.op == O::SCOPE_BEGIN && callbacks.scopeBegin) callbacks.scopeBegin(r);
            if (r.op == O::SCOPE_END && callbacks.scopeEnd) callbacks.scopeEnd(r);
            break;
          case Family::unsupported:
            throw ReplayError(s.where(r) + ": " + s.capture->functionName(r.function) +
                              " cannot be replayed: " + r.fields.getUnsupported().getReason().cStr());
        }
        ++result.records;
      }
      if (hsa) hsa->ringDoorbells();
    } catch (...) {
      impl_->zeSession = nullptr;
      impl_->hsaSession = nullptr;
      throw;
    }
    impl_->zeSession = nullptr;
    impl_->hsaSession = nullptr;
  }
  return result;
}

void Replayer::synchronizeAll() {
  if (impl_->zeSession) impl_->zeSession->synchronizeAll();
  if (impl_->hsaSession) impl_->hsaSession->synchronizeAll();
}

}  // namespace gtap::readers
