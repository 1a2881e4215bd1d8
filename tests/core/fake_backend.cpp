#include "fake_backend.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <type_traits>

namespace spgemmd::testing {

namespace {

// Entries of a filled matrix of `info` in rows [0, row): spread evenly.
int64_t entries_before(const spgemm::matrix_info& info, int64_t row) {
  return info.rows == 0 ? 0 : row * info.nnz / info.rows;
}

template <typename T>
spgemm::csr_matrix<T> filled(const spgemm::matrix_info& info, int64_t row_begin, int64_t row_end) {
  spgemm::csr_matrix<T> m;
  m.rows = row_end - row_begin;
  m.cols = info.cols;
  m.row_offsets.assign(1, 0);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t length = entries_before(info, r + 1) - entries_before(info, r);
    for (int64_t c = 0; c < length; ++c) {
      m.col_indices.push_back(static_cast<spgemm::index_t>(c));
      m.values.push_back(T(1));
    }
    m.row_offsets.push_back(static_cast<spgemm::offset_t>(m.col_indices.size()));
  }
  return m;
}

}  // namespace

spgemm::any_csr filled_matrix(const spgemm::matrix_info& info, int64_t row_begin, int64_t row_end) {
  if (info.type == spgemm::value_type::f32) return filled<float>(info, row_begin, row_end);
  return filled<double>(info, row_begin, row_end);
}

spgemm::any_csr filled_matrix(const spgemm::matrix_info& info) { return filled_matrix(info, 0, info.rows); }

// A stored shape; its bytes count on its backend while it lives.
class fake_backend::fake_matrix final : public spgemm::stored_matrix {
 public:
  fake_matrix(fake_backend& owner, const spgemm::matrix_info& info) : owner_(owner), info_(info) {
    owner_.add(info_.bytes());
  }
  ~fake_matrix() override { owner_.remove(info_.bytes()); }
  spgemm::matrix_info info() const override { return info_; }

 private:
  fake_backend& owner_;
  spgemm::matrix_info info_;
};

// Stores the rows as they are written: the fake keeps only their shape.
class fake_writer final : public spgemm::matrix_writer {
 public:
  fake_writer(fake_backend& owner, const spgemm::matrix_info& info, const spgemm::host_csr_arrays& arrays)
      : matrix_writer(info, arrays), owner_(owner) {}
  std::shared_ptr<spgemm::stored_matrix> finish() override {
    require_complete();
    return owner_.allocate(info_);
  }

 protected:
  void copy(int64_t, int64_t) override {}

 private:
  fake_backend& owner_;
};

void fake_backend::set_nnz_factor(int64_t factor) {
  std::lock_guard<std::mutex> lock(mu_);
  nnz_factor_ = factor;
}

void fake_backend::set_workspace(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  workspace_ = bytes;
}

void fake_backend::set_delay(std::chrono::microseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  delay_ = delay;
}

void fake_backend::fail_next(spgemm::error_kind kind, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_kind_ = kind;
  fail_count_ = count;
}

void fake_backend::close_gate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_open_ = false;
}

void fake_backend::open_gate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    gate_open_ = true;
  }
  cv_.notify_all();
}

bool fake_backend::wait_running(int n, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return running_ >= n; });
}

std::size_t fake_backend::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

std::size_t fake_backend::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

int64_t fake_backend::products_run() const {
  std::lock_guard<std::mutex> lock(mu_);
  return products_;
}

int64_t fake_backend::numeric_products_run() const {
  std::lock_guard<std::mutex> lock(mu_);
  return numeric_products_;
}

int64_t fake_backend::values_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_written_;
}

int64_t fake_backend::values_copied() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_copied_;
}

int64_t fake_backend::copies_made() const {
  std::lock_guard<std::mutex> lock(mu_);
  return copies_;
}

std::size_t fake_backend::last_memory_limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_memory_limit_;
}

spgemm::backend_memory fake_backend::memory() const {
  std::lock_guard<std::mutex> lock(mu_);
  spgemm::backend_memory m;
  m.total_bytes = std::size_t(1) << 40;
  m.free_bytes = m.total_bytes - allocated_;
  m.in_use_bytes = allocated_;
  m.peak_bytes = peak_;
  return m;
}

void fake_backend::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = allocated_;
}

void fake_backend::add(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  allocated_ += bytes;
  peak_ = std::max(peak_, allocated_);
}

void fake_backend::remove(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  allocated_ -= bytes;
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::allocate(const spgemm::matrix_info& info) {
  return std::make_shared<fake_matrix>(*this, info);
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::store(const spgemm::any_csr& m) {
  return allocate(spgemm::info_of(m));
}

std::unique_ptr<spgemm::matrix_writer> fake_backend::open_writer(const spgemm::matrix_info& info,
                                                                 const spgemm::host_csr_arrays& arrays) {
  return std::make_unique<fake_writer>(*this, info, arrays);
}

spgemm::any_csr fake_backend::fetch(const spgemm::stored_matrix& m, int64_t row_begin, int64_t row_end) {
  return filled_matrix(m.info(), row_begin, row_end);
}

void fake_backend::append_rows(const spgemm::stored_matrix& m, int64_t row_begin, int64_t row_end,
                               spgemm::any_csr& out) {
  const spgemm::any_csr rows = fetch(m, row_begin, row_end);
  std::visit(
      [](const auto& from, auto& to) {
        using T = typename std::decay_t<decltype(from)>::value;
        using U = typename std::decay_t<decltype(to)>::value;
        if constexpr (std::is_same_v<T, U>) {
          const spgemm::offset_t shift = to.nnz();
          for (std::size_t r = 1; r < from.row_offsets.size(); ++r) to.row_offsets.push_back(from.row_offsets[r] + shift);
          to.col_indices.insert(to.col_indices.end(), from.col_indices.begin(), from.col_indices.end());
          to.values.insert(to.values.end(), from.values.begin(), from.values.end());
          to.rows += from.rows;
        } else {
          throw spgemm::error(spgemm::error_kind::bad_input, "value types differ");
        }
      },
      rows, out);
}

void fake_backend::set_pins_host(bool pins) {
  std::lock_guard<std::mutex> lock(mu_);
  pins_host_ = pins;
}

std::size_t fake_backend::pinned() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t bytes = 0;
  for (const auto& [p, n] : pinned_) bytes += n;
  return bytes;
}

int64_t fake_backend::pinned_fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pinned_fetches_;
}

bool fake_backend::pin_host(void* p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pins_host_) return false;
  pinned_[p] = bytes;
  return true;
}

void fake_backend::unpin_host(void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  pinned_.erase(p);
}

void fake_backend::fetch_into_pinned(const spgemm::stored_matrix& m, const spgemm::host_csr_targets& to) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto inside = [&](const void* t) {
      for (const auto& [p, n] : pinned_) {
        if (t >= p && static_cast<const char*>(t) < static_cast<const char*>(p) + n) return true;
      }
      return false;
    };
    if (!inside(to.row_offsets) || !inside(to.col_indices) || !inside(to.values)) {
      throw spgemm::error(spgemm::error_kind::bad_input, "a target is not pinned");
    }
    ++pinned_fetches_;
  }
  std::visit(
      [&](const auto& rows) {
        std::memcpy(to.row_offsets, rows.row_offsets.data(), rows.row_offsets.size() * sizeof(spgemm::offset_t));
        std::memcpy(to.col_indices, rows.col_indices.data(), rows.col_indices.size() * sizeof(spgemm::index_t));
        std::memcpy(to.values, rows.values.data(), rows.values.size() * sizeof(rows.values[0]));
      },
      fetch(m, 0, m.info().rows));
}

spgemm::matrix_info fake_backend::product_info(const spgemm::matrix_info& a, const spgemm::matrix_info& b) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t nnz = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    nnz += std::min((entries_before(a, r + 1) - entries_before(a, r)) * nnz_factor_, b.cols);
  }
  return {a.rows, b.cols, nnz, spgemm::value_type::f64};
}

spgemm::memory_estimate fake_backend::estimate_multiply(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b,
                                                        const spgemm::multiply_options&) {
  spgemm::require_conformable(a.info(), b.info());
  const spgemm::matrix_info c = product_info(a.info(), b.info());
  spgemm::memory_estimate e;
  e.output_bytes = c.bytes();
  {
    std::lock_guard<std::mutex> lock(mu_);
    e.workspace_bytes = workspace_;
  }
  e.exact = true;
  e.products = c.nnz;
  e.method = "fake";
  return e;
}

void fake_backend::run_call(const spgemm::cancel_token& cancel) {
  std::unique_lock<std::mutex> lock(mu_);
  ++running_;
  cv_.notify_all();
  struct leave {
    fake_backend& b;
    std::unique_lock<std::mutex>& lock;
    ~leave() {
      if (!lock.owns_lock()) lock.lock();
      --b.running_;
    }
  } on_exit{*this, lock};
  while (!gate_open_) {
    cv_.wait_for(lock, std::chrono::milliseconds(1));
    cancel.throw_if_cancelled();
  }
  const auto until = std::chrono::steady_clock::now() + delay_;
  lock.unlock();
  while (std::chrono::steady_clock::now() < until) {
    cancel.throw_if_cancelled();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  cancel.throw_if_cancelled();
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::multiply(const spgemm::stored_matrix& a,
                                                              const spgemm::stored_matrix& b,
                                                              const spgemm::multiply_options& options,
                                                              std::size_t memory_limit,
                                                              const spgemm::cancel_token& cancel,
                                                              std::size_t* peak_bytes) {
  const spgemm::memory_estimate e = estimate_multiply(a, b, options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_memory_limit_ = memory_limit;
  }
  if (peak_bytes) *peak_bytes = e.total();
  run_call(cancel);
  count_product(false);
  add(e.workspace_bytes);  // held while the product is formed
  auto c = allocate(product_info(a.info(), b.info()));
  remove(e.workspace_bytes);
  return c;
}

void fake_backend::count_product(bool numeric) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_count_ > 0) {
    --fail_count_;
    throw spgemm::error(*fail_kind_, "the fake backend was told to fail");
  }
  ++products_;
  if (numeric) ++numeric_products_;
}

spgemm::memory_estimate fake_backend::estimate_multiply_numeric(const spgemm::stored_matrix& a,
                                                                const spgemm::stored_matrix& b,
                                                                const spgemm::stored_matrix& structure,
                                                                const spgemm::multiply_options&) {
  spgemm::require_conformable(a.info(), b.info());
  spgemm::memory_estimate e;
  e.output_bytes = structure.info().bytes();
  {
    std::lock_guard<std::mutex> lock(mu_);
    e.workspace_bytes = workspace_;
  }
  e.exact = true;
  e.products = structure.info().nnz;
  e.method = "fake numeric";
  return e;
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::multiply_numeric(const spgemm::stored_matrix& a,
                                                                      const spgemm::stored_matrix& b,
                                                                      const spgemm::stored_matrix& structure,
                                                                      const spgemm::multiply_options& options,
                                                                      std::size_t memory_limit,
                                                                      const spgemm::cancel_token& cancel,
                                                                      std::size_t* peak_bytes) {
  const spgemm::memory_estimate e = estimate_multiply_numeric(a, b, structure, options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_memory_limit_ = memory_limit;
  }
  if (peak_bytes) *peak_bytes = e.total();
  run_call(cancel);
  count_product(true);
  add(e.workspace_bytes);
  auto c = allocate(structure.info());
  remove(e.workspace_bytes);
  return c;
}

void fake_backend::write_values(spgemm::stored_matrix&, const void*) {
  std::lock_guard<std::mutex> lock(mu_);
  ++values_written_;
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::with_values(const spgemm::stored_matrix& m, const void*) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++values_copied_;
  }
  return allocate(m.info());
}

spgemm::memory_estimate fake_backend::estimate_transpose(const spgemm::stored_matrix& a) {
  const spgemm::matrix_info m = a.info();
  spgemm::memory_estimate e;
  e.output_bytes = spgemm::matrix_info{m.cols, m.rows, m.nnz, m.type}.bytes();
  e.exact = true;
  e.method = "transpose";
  return e;
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::transpose(const spgemm::stored_matrix& a,
                                                               const spgemm::cancel_token& cancel,
                                                               std::size_t* peak_bytes) {
  run_call(cancel);
  const spgemm::matrix_info m = a.info();
  if (peak_bytes) *peak_bytes = m.bytes();
  return allocate({m.cols, m.rows, m.nnz, m.type});
}

std::shared_ptr<spgemm::stored_matrix> fake_backend::copy_rows(const spgemm::stored_matrix& m, int64_t row_begin,
                                                               int64_t row_end) {
  const spgemm::matrix_info info = m.info();
  if (row_begin < 0 || row_end < row_begin || row_end > info.rows) {
    throw spgemm::error(spgemm::error_kind::bad_input, "rows out of range");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++copies_;
  }
  const int64_t nnz = entries_before(info, row_end) - entries_before(info, row_begin);
  return allocate({row_end - row_begin, info.cols, nnz, info.type});
}

spgemm::row_work fake_backend::work_per_row(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b) {
  spgemm::require_conformable(a.info(), b.info());
  const spgemm::matrix_info info = a.info();
  int64_t factor = 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    factor = nnz_factor_;
  }
  spgemm::row_work w;
  for (int64_t r = 0; r < info.rows; ++r) {
    const int64_t entries = entries_before(info, r + 1) - entries_before(info, r);
    w.entries.push_back(entries);
    w.products.push_back(entries * factor);
  }
  return w;
}

}  // namespace spgemmd::testing
