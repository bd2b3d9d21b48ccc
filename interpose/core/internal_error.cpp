#include "internal_error.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include "log.h"
#include "session.h"

namespace gtap::core {

std::atomic<bool> g_internalError{false};
TestSite g_testThrowAt = TestSite::none;

namespace {

std::atomic<uint64_t> g_testThrowCountdown{1};

// The current exception's what(), without allocating.
const char* currentWhat() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

struct SiteName {
  const char* name;
  TestSite site;
};
constexpr SiteName kSites[] = {
    {"ze-before", TestSite::zeBeforeCall}, {"ze-after", TestSite::zeAfterCall},
    {"hsa", TestSite::hsaHook},            {"hsa-packet", TestSite::hsaPacket},
    {"hal-call", TestSite::halCall},       {"hal-thunk", TestSite::halThunk},
    {"record-buffer", TestSite::recordBuffer}, {"writer", TestSite::writer},
};

__attribute__((constructor(101))) void readTestThrowAt() {
  const char* v = std::getenv("GTAP_TEST_THROW_AT");
  if (!v || !*v) return;
  const char* colon = std::strchr(v, ':');
  size_t length = colon ? static_cast<size_t>(colon - v) : std::strlen(v);
  for (const SiteName& s : kSites)
    if (std::strlen(s.name) == length && std::strncmp(s.name, v, length) == 0) g_testThrowAt = s.site;
  if (g_testThrowAt == TestSite::none) {
    logLine("GTAP_TEST_THROW_AT='%s' names no site; ignored", v);
    return;
  }
  if (colon) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(colon + 1, &end, 10);
    if (n > 0 && end && !*end) g_testThrowCountdown.store(n);
  }
}

}  // namespace

void testThrowReached(TestSite site) {
  if (site != g_testThrowAt || g_testThrowCountdown.fetch_sub(1) != 1) return;
  // As an allocation that fails would.
  throw std::bad_alloc();
}

void stopAfterInternalError(const char* where) noexcept {
  const char* what = currentWhat();
  if (g_internalError.exchange(true)) return;
  stopSessionAfterInternalError(where, what);
}

}  // namespace gtap::core
