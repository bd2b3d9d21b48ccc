// fork() support. Each global lock is taken before the fork, so the state it
// guards is consistent at the moment of the fork; the parent releases them,
// the child replaces them with fresh ones (some cannot be released by another
// thread id) and forgets the parent's objects.
#include "common.h"
#include "sampling.h"
#include "sync.h"

#include <pthread.h>

#include <mutex>

namespace sim {

namespace {

void prepare() {
  registryForkPrepare();
  sync::mutex().lock();
  memoryForkPrepare();
}

void parent() {
  memoryForkParent();
  sync::mutex().unlock();
  registryForkParent();
}

void child() {
  memoryForkChild();
  sync::replaceAfterFork();
  registryForkChild();
  sampling::forkChild();
}

std::once_flag g_installOnce;

}  // namespace

void installForkHandlers() {
  std::call_once(g_installOnce, [] { pthread_atfork(prepare, parent, child); });
}

}  // namespace sim
