#include "core/panels/panel_stream.hpp"

#include <utility>
#include <vector>

namespace spgemmd::core {

device_panel& device_panel::operator=(device_panel&& o) noexcept {
  if (this != &o) {
    release();
    first_row = o.first_row;
    device = o.device;
    backend = std::move(o.backend);
    rows = std::move(o.rows);
    on_release_ = std::move(o.on_release_);
    o.on_release_ = nullptr;
  }
  return *this;
}

void device_panel::release() {
  rows.reset();  // freed on the device before its bytes are given back
  backend.reset();
  if (on_release_) {
    auto f = std::move(on_release_);
    on_release_ = nullptr;
    f();
  }
}

void panel_stream::open(const spgemm::matrix_info& shape) {
  std::function<void(const spgemm::matrix_info&)> f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shape_ = shape;
    f = std::move(on_open_);
  }
  if (f) f(shape);
}

void panel_stream::when_open(std::function<void(const spgemm::matrix_info&)> f) {
  std::optional<spgemm::matrix_info> shape;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!shape_) {
      on_open_ = std::move(f);
      return;
    }
    shape = shape_;
  }
  f(*shape);
}

std::function<void()> panel_stream::take_wake() {
  cv_.notify_all();
  auto w = std::move(wake_);
  wake_ = nullptr;
  return w;
}

void panel_stream::put(device_panel p) {
  std::function<void()> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_ || closed_) return;  // p is freed on the way out
    const bool next = p.first_row == next_row_;
    ready_.emplace(p.first_row, std::move(p));
    if (next) wake = take_wake();
  }
  if (wake) wake();
}

void panel_stream::close(const outcome& result) {
  std::map<int64_t, device_panel> dropped;
  std::function<void()> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    result_ = result;
    if (!result.ok()) dropped.swap(ready_);
    wake = take_wake();
  }
  if (wake) wake();
}  // the panels dropped are freed here, without the lock

void panel_stream::abandon() {
  std::map<int64_t, device_panel> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    dropped.swap(ready_);
    wake_ = nullptr;
  }
}

panel_stream::state panel_stream::look(std::optional<device_panel>* out, outcome* failure) {
  if (closed_ && !result_.ok()) {
    *failure = result_;
    return state::failed;
  }
  auto it = ready_.find(next_row_);
  if (it != ready_.end()) {
    next_row_ += it->second.rows->info().rows;
    out->emplace(std::move(it->second));
    ready_.erase(it);
    return state::panel;
  }
  if (shape_ && next_row_ >= shape_->rows && (closed_ || shape_->rows == 0)) return state::finished;
  if (closed_) {
    *failure = {status::internal, "the product's panels ended at row " + std::to_string(next_row_) + " of " +
                                      std::to_string(shape_ ? shape_->rows : 0)};
    return state::failed;
  }
  return state::waiting;
}

panel_stream::state panel_stream::poll(std::optional<device_panel>* out, std::function<void()> wake,
                                       outcome* failure) {
  std::lock_guard<std::mutex> lock(mu_);
  const state s = look(out, failure);
  if (s == state::waiting) wake_ = std::move(wake);
  return s;
}

panel_stream::state panel_stream::next(std::optional<device_panel>* out, outcome* failure) {
  std::unique_lock<std::mutex> lock(mu_);
  state s = look(out, failure);
  while (s == state::waiting) {
    cv_.wait(lock);
    s = look(out, failure);
  }
  return s;
}

}  // namespace spgemmd::core
