// Ctrl-C (SIGINT) and SIGTERM in the `spgemm` CLI.
//
// Until the command holds something to clean up, a signal ends it at once.
// From cleanup_from_now() on (operands about to be uploaded, a job about to
// start, an output file about to be written) the first signal cancels the
// command's calls instead (spgemm::client::cancellation): the command unwinds,
// the server cancels its job, the operands uploaded for it are deleted and a
// partial output file is removed; main then exits with 128 + the signal's
// number. A second signal ends the command at once.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "spgemm/client/client.hpp"

namespace spgemm::cli {

// Thrown where the command notices a signal outside a call (writing a file).
struct interrupted {};

class interrupts {
 public:
  // Blocks SIGINT and SIGTERM in this thread and in the threads started after
  // it (so construct it first in main), and starts the thread that takes them.
  interrupts();
  interrupts(const interrupts&) = delete;
  interrupts& operator=(const interrupts&) = delete;

  // For the connection options of every client the command makes.
  const std::shared_ptr<spgemm::client::cancellation>& cancellation() const { return cancel_; }
  void cleanup_from_now();
  // The signal taken, 0 while none.
  int signal() const { return signal_; }
  // Throws interrupted once a signal has been taken.
  void check() const;

 private:
  void take_signals();

  std::shared_ptr<spgemm::client::cancellation> cancel_;
  std::mutex mu_;
  bool cleanup_ = false;
  std::atomic<int> signal_{0};
};

// "SIGINT", "SIGTERM".
const char* signal_name(int sig);

}  // namespace spgemm::cli
