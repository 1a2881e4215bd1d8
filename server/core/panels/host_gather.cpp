#include "core/panels/host_gather.hpp"

#include <algorithm>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

int drains_per_device(std::size_t devices) {
  const auto threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(threads / static_cast<int>(std::max<std::size_t>(devices, 1)), 4, 32);
}

}  // namespace

host_gather::host_gather(matrix_cache& cache, std::function<void(std::exception_ptr)> failed)
    : cache_(cache),
      pieces_(drains_per_device(cache.backends().size())),
      failed_(std::move(failed)),
      held_(&cache, matrix_cache::host) {}

host_gather::~host_gather() { stop(); }

void host_gather::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : drains_) t.join();
  drains_.clear();
}

void host_gather::fail(std::exception_ptr e) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = !failure_;
    if (first) failure_ = e;
    todo_.clear();  // their panels are freed
  }
  if (first) failed_(e);
}

bool host_gather::room_on_disk() {
  const std::shared_ptr<spill_space> space = cache_.spill();
  if (!space) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) file_ = space->open();
  return true;
}

std::shared_ptr<const spilled_rows> host_gather::write_to_disk(const spgemm::any_csr& rows) {
  std::shared_ptr<const spilled_rows> spilled;
  if (!file_->write(rows, &spilled)) {
    const std::shared_ptr<spill_space> space = cache_.spill();
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "the product kept past the host budget passes the spill budget too (" +
                            std::to_string(space->budget()) + " bytes, --spill_budget_bytes, in " + space->dir() +
                            "); stream it instead, or raise a budget");
  }
  return spilled;
}

void host_gather::put(device_panel p) {
  const spgemm::matrix_info info = p.rows->info();
  // Every block's offsets begin with a 0 of its own.
  const bool in_memory = held_.try_grow(info.bytes() + pieces_ * sizeof(spgemm::offset_t));
  if (!in_memory && !room_on_disk()) {
    fail(std::make_exception_ptr(spgemm::error(
        spgemm::error_kind::does_not_fit, "the product kept in host memory passes the host budget (" +
                                              std::to_string(cache_.host_budget()) +
                                              " bytes, --host_budget_bytes) at row " + std::to_string(p.first_row) +
                                              "; stream it instead, raise the budget, or give the server a "
                                              "--spill_dir")));
    return;
  }
  const int device = p.device;
  auto panel = std::make_shared<device_panel>(std::move(p));
  const int64_t step = std::max<int64_t>(1, (info.rows + pieces_ - 1) / pieces_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_) return;
    // The drains first: where a thread can not be had, the panel goes back with the throw.
    if (std::find(devices_.begin(), devices_.end(), device) == devices_.end()) {
      devices_.push_back(device);
      for (int i = 0; i < pieces_; ++i) drains_.emplace_back([this] { drain(); });
    }
    for (int64_t begin = 0; begin < info.rows; begin += step) {
      todo_.push_back({panel, begin, std::min(info.rows, begin + step), !in_memory});
    }
  }
  cv_.notify_all();
}

void host_gather::drain() {
  while (true) {
    piece next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !todo_.empty(); });
      if (todo_.empty()) return;
      next = std::move(todo_.front());
      todo_.pop_front();
    }
    try {
      const device_panel& p = *next.panel;
      const spgemm::matrix_info info = p.rows->info();
      spgemm::any_csr rows = info.type == spgemm::value_type::f32 ? spgemm::any_csr(spgemm::csr_matrix<float>{})
                                                                   : spgemm::any_csr(spgemm::csr_matrix<double>{});
      std::visit([&](auto& m) { m.cols = info.cols; }, rows);
      p.backend->append_rows(*p.rows, next.begin, next.end, rows);
      host_matrix::block b{p.first_row + next.begin, nullptr, nullptr};
      if (next.to_disk) {
        b.spilled = write_to_disk(rows);
      } else {
        b.rows = std::make_shared<const spgemm::any_csr>(std::move(rows));
      }
      std::lock_guard<std::mutex> lock(mu_);
      blocks_.push_back(std::move(b));
    } catch (...) {
      fail(std::current_exception());
    }
    next.panel.reset();  // the last piece of a panel frees it on its device
  }
}

std::shared_ptr<const host_matrix> host_gather::finish(const spgemm::matrix_info& shape) {
  stop();
  if (failure_) std::rethrow_exception(failure_);
  if (blocks_.empty()) {  // no rows
    spgemm::any_csr none = shape.type == spgemm::value_type::f32 ? spgemm::any_csr(spgemm::csr_matrix<float>{})
                                                                 : spgemm::any_csr(spgemm::csr_matrix<double>{});
    std::visit([&](auto& m) { m.cols = shape.cols; }, none);
    return std::make_shared<const host_matrix>(std::move(none));
  }
  std::sort(blocks_.begin(), blocks_.end(),
            [](const host_matrix::block& a, const host_matrix::block& b) { return a.first_row < b.first_row; });
  return std::make_shared<const host_matrix>(std::move(blocks_));
}

}  // namespace spgemmd::core
