// Human-readable sizes and a progress bar on stderr for the `spgemm` CLI.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "spgemm/client/client.hpp"

namespace spgemm::cli {

// "512 B", "1.5 KiB", "12.3 MiB", "4.00 GiB".
std::string human_bytes(double bytes);
// "850 ms", "12.3 s", "4m 05s", "2h 10m".
std::string human_duration(double seconds);

// Draws "label [#####.....]  45%  12.3 MiB  8.1 MiB/s" on stderr, only when
// stderr is a terminal and the transfer has run longer than a second. Not
// thread-safe; one bar per transfer.
class progress_bar {
 public:
  explicit progress_bar(std::string label);
  ~progress_bar();
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  void update(const spgemm::client::progress& p);
  // A callback that forwards to update().
  spgemm::client::progress_callback callback();
  // Bytes seen in the last update.
  std::int64_t bytes() const { return last_.bytes; }
  // Clears the line if one was drawn.
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  spgemm::client::progress last_;
};

}  // namespace spgemm::cli
