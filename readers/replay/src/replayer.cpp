#include "gtap/readers/replayer.h"

#include <set>

#include "session.h"
#include "setup.h"
#include "substitution.h"

namespace gtap::readers {

struct Replayer::Impl {
  replay::ReplaySetup setup;
  bool validated = false;
  bool prepared = false;
  replay::Session* current = nullptr;  // during run()
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
  s.payloads.resolve(*s.capture, *s.stream, s.options.remaps, s.options.verify);
  impl_->validated = true;
}

void Replayer::prepare() {
  if (!impl_->validated) validate();
  auto& s = impl_->setup;
  const std::string& file = s.capture->path();
  try {
    s.ze = &replay::loadZeFunctions();
  } catch (const std::exception& e) {
    throw ReplayError(file + ": " + e.what());
  }
  s.devices = replay::mapDevices(*s.ze, *s.capture, *s.stream, s.warnings);
  s.moduleBinaries = replay::checkSubstitutions(s);
  impl_->prepared = true;
}

ReplayResult Replayer::run(const ReplayCallbacks& callbacks) {
  if (!impl_->prepared) throw ReplayError(impl_->setup.capture->path() + ": replay run before prepare");
  replay::Session session(impl_->setup, callbacks);
  impl_->current = &session;
  try {
    ReplayResult result = session.run();
    impl_->current = nullptr;
    return result;
  } catch (...) {
    impl_->current = nullptr;
    throw;
  }
}

void Replayer::synchronizeAll() {
  if (impl_->current) impl_->current->synchronizeAll();
}

}  // namespace gtap::readers
