#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace spgemm::cli {

std::string human_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes < 0 ? 0 : bytes;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", v);
  } else {
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
  }
  return buf;
}

std::string human_duration(double seconds) {
  char buf[32];
  if (seconds < 1.0) {
    std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1e3);
  } else if (seconds < 60.0) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 3600.0) {
    std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh %02dm", static_cast<int>(seconds / 3600),
                  (static_cast<int>(seconds) / 60) % 60);
  }
  return buf;
}

progress_bar::progress_bar(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

progress_bar::~progress_bar() { finish(); }

spgemm::client::progress_callback progress_bar::callback() {
  return [this](const spgemm::client::progress& p) { update(p); };
}

void progress_bar::update(const spgemm::client::progress& p) {
  last_ = p;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (!p.done && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(p.done);
}

void progress_bar::draw(bool final) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction =
      last_.total_rows > 0 ? static_cast<double>(last_.rows) / static_cast<double>(last_.total_rows) : 0.0;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(width - filled), '.');
  const double rate = elapsed > 0 ? static_cast<double>(last_.bytes) / elapsed : 0.0;
  std::fprintf(stderr, "\r%-10s [%s] %3.0f%%  %10s  %10s/s ", label_.c_str(), bar.c_str(), fraction * 100.0,
               human_bytes(static_cast<double>(last_.bytes)).c_str(), human_bytes(rate).c_str());
  drawn_ = true;
  if (final) {
    std::fprintf(stderr, "\n");
    drawn_ = false;
    enabled_ = false;
  }
  std::fflush(stderr);
}

void progress_bar::finish() {
  if (drawn_) {
    draw(true);
  }
}

}  // namespace spgemm::cli
