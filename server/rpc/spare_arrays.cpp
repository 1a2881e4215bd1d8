#include "rpc/spare_arrays.hpp"

#include <utility>

namespace spgemmd {

namespace wire = spgemm::wire;

namespace {

// Whether `have` elements hold `need` without being more than twice as many.
bool fits(std::size_t have, int64_t need) {
  const auto n = static_cast<std::size_t>(need);
  return have >= n && have <= 2 * n;
}

}  // namespace

wire::csr_arrays spare_arrays::take(int64_t rows, int64_t nnz, spgemm::v1::ValueType type) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    const std::size_t values = type == spgemm::v1::FLOAT32 ? it->values_f32.capacity() : it->values_f64.capacity();
    if (fits(it->row_offsets.capacity(), rows + 1) && fits(it->col_indices.capacity(), nnz) && fits(values, nnz)) {
      wire::csr_arrays a = std::move(*it);
      kept_.erase(std::next(it).base());
      bytes_ -= a.capacity_bytes();
      return a;
    }
  }
  return {};
}

void spare_arrays::give(wire::csr_arrays a) {
  const std::size_t bytes = a.capacity_bytes();
  if (bytes == 0 || bytes > limit_) return;
  std::deque<wire::csr_arrays> dropped;  // freed after the lock
  std::lock_guard<std::mutex> lock(mutex_);
  while (bytes_ + bytes > limit_) {
    bytes_ -= kept_.front().capacity_bytes();
    dropped.push_back(std::move(kept_.front()));
    kept_.pop_front();
  }
  kept_.push_back(std::move(a));
  bytes_ += bytes;
}

void spare_arrays::clear() {
  std::deque<wire::csr_arrays> dropped;  // freed after the lock
  std::lock_guard<std::mutex> lock(mutex_);
  dropped.swap(kept_);
  bytes_ = 0;
}

}  // namespace spgemmd
