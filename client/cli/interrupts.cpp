#include "interrupts.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace spgemm::cli {
namespace {

sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

interrupts::interrupts() : cancel_(std::make_shared<spgemm::client::cancellation>()) {
  const sigset_t set = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Detached: it waits in sigwait until the process ends.
  std::thread([this] { take_signals(); }).detach();
}

void interrupts::cleanup_from_now() {
  std::lock_guard<std::mutex> lock(mu_);
  cleanup_ = true;
}

void interrupts::check() const {
  if (signal_ != 0) throw interrupted{};
}

void interrupts::take_signals() {
  const sigset_t set = shutdown_signals();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    if (!cleanup_) std::_Exit(128 + sig);
    if (signal_ != 0) {
      std::fprintf(stderr, "\nspgemm: %s again: quitting without cleaning up\n", signal_name(sig));
      std::_Exit(128 + sig);
    }
    signal_ = sig;
    std::fprintf(stderr, "\nspgemm: %s: cancelling (again to quit at once)\n", signal_name(sig));
    cancel_->cancel();
  }
}

const char* signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal"; }

}  // namespace spgemm::cli
