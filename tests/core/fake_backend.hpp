// A backend for the core's tests: it stores shapes, not values, and counts
// every byte it would allocate, so a test can hold the scheduler and the cache
// to the device budget. Products are controllable: their size, how long they
// take, whether they fail, and a gate that holds them until opened.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::testing {

// A matrix of `info` whose entries are spread evenly over its rows, each row
// holding columns 0, 1, ...: the one valid CSR of that shape the fake stores.
spgemm::any_csr filled_matrix(const spgemm::matrix_info& info, int64_t row_begin, int64_t row_end);
spgemm::any_csr filled_matrix(const spgemm::matrix_info& info);

class fake_backend final : public spgemm::backend {
 public:
  explicit fake_backend(std::string name = "fake0") : name_(std::move(name)) {}

  // A product A B has A's rows, B's columns and in each row
  // min(nnz_factor x the entries of A's row, cols) entries; a transpose A's
  // entries.
  void set_nnz_factor(int64_t factor);
  // Bytes a product allocates beside its output while it runs (its estimate says so).
  void set_workspace(std::size_t bytes);
  // How long a product or transpose takes (cancel is polled meanwhile).
  void set_delay(std::chrono::microseconds delay);
  // The next `count` products throw error(kind).
  void fail_next(spgemm::error_kind kind, int count = 1);
  // While closed, products and transposes wait at their start (cancel is polled).
  void close_gate();
  void open_gate();
  // Waits until `n` products or transposes are running (false after `timeout`).
  bool wait_running(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Whether pin_host pins (a GPU's copy engines' memory): then
  // fetch_into_pinned copies a matrix into it, as a GPU's would.
  void set_pins_host(bool pins);
  std::size_t pinned() const;           // bytes pinned now
  int64_t pinned_fetches() const;       // fetch_into_pinned calls

  std::size_t allocated() const;  // bytes held now
  std::size_t peak() const;       // the most held at once
  int64_t products_run() const;   // numeric-only ones included
  int64_t numeric_products_run() const;
  int64_t values_written() const;  // write_values calls (in place)
  int64_t values_copied() const;   // with_values calls
  int64_t copies_made() const;  // copy_rows calls
  // The memory limit the last product was given (its admitted estimate).
  std::size_t last_memory_limit() const;

  std::string name() const override { return name_; }
  std::string description() const override { return "fake backend " + name_; }
  bool is_gpu() const override { return false; }
  spgemm::backend_memory memory() const override;
  void reset_peak() override;
  std::shared_ptr<spgemm::stored_matrix> store(const spgemm::any_csr& m) override;
  std::unique_ptr<spgemm::matrix_writer> open_writer(const spgemm::matrix_info& info,
                                                     const spgemm::host_csr_arrays& arrays) override;
  spgemm::any_csr fetch(const spgemm::stored_matrix& m, int64_t row_begin, int64_t row_end) override;
  void append_rows(const spgemm::stored_matrix& m, int64_t row_begin, int64_t row_end, spgemm::any_csr& out) override;
  bool pin_host(void* p, std::size_t bytes) override;
  void unpin_host(void* p) override;
  void fetch_into_pinned(const spgemm::stored_matrix& m, const spgemm::host_csr_targets& to) override;
  spgemm::memory_estimate estimate_multiply(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b,
                                            const spgemm::multiply_options& options) override;
  std::shared_ptr<spgemm::stored_matrix> multiply(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b,
                                                  const spgemm::multiply_options& options, std::size_t memory_limit,
                                                  const spgemm::cancel_token& cancel,
                                                  std::size_t* peak_bytes) override;
  using spgemm::backend::multiply;
  std::shared_ptr<spgemm::stored_matrix> transpose(const spgemm::stored_matrix& a, const spgemm::cancel_token& cancel,
                                                   std::size_t* peak_bytes) override;
  spgemm::memory_estimate estimate_transpose(const spgemm::stored_matrix& a) override;
  // Numeric-only products: C has the structure's shape; new values are counted.
  spgemm::memory_estimate estimate_multiply_numeric(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b,
                                                    const spgemm::stored_matrix& structure,
                                                    const spgemm::multiply_options& options) override;
  std::shared_ptr<spgemm::stored_matrix> multiply_numeric(const spgemm::stored_matrix& a,
                                                          const spgemm::stored_matrix& b,
                                                          const spgemm::stored_matrix& structure,
                                                          const spgemm::multiply_options& options,
                                                          std::size_t memory_limit, const spgemm::cancel_token& cancel,
                                                          std::size_t* peak_bytes) override;
  void write_values(spgemm::stored_matrix& m, const void* values) override;
  std::shared_ptr<spgemm::stored_matrix> with_values(const spgemm::stored_matrix& m, const void* values) override;
  // The rows of a fake matrix (of any fake backend): the entries that fall in them.
  std::shared_ptr<spgemm::stored_matrix> copy_rows(const spgemm::stored_matrix& m, int64_t row_begin,
                                                   int64_t row_end) override;
  // Each row's entries, and its products as the fake's products count them (nnz_factor per entry).
  spgemm::row_work work_per_row(const spgemm::stored_matrix& a, const spgemm::stored_matrix& b) override;

  // Stores a matrix of `info` (as an upload's writer would).
  std::shared_ptr<spgemm::stored_matrix> allocate(const spgemm::matrix_info& info);

 private:
  class fake_matrix;
  spgemm::matrix_info product_info(const spgemm::matrix_info& a, const spgemm::matrix_info& b) const;
  void add(std::size_t bytes);
  void remove(std::size_t bytes);
  // A running call: waits at the gate, then for the delay, polling `cancel`.
  void run_call(const spgemm::cancel_token& cancel);
  // Fails where told to, else counts a product (numeric-only too where said).
  void count_product(bool numeric);

  const std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t nnz_factor_ = 1;
  std::size_t workspace_ = 0;
  std::chrono::microseconds delay_{0};
  std::optional<spgemm::error_kind> fail_kind_;
  int fail_count_ = 0;
  bool gate_open_ = true;
  int running_ = 0;
  int64_t products_ = 0, numeric_products_ = 0, values_written_ = 0, values_copied_ = 0;
  int64_t copies_ = 0;
  std::size_t last_memory_limit_ = 0;
  std::size_t allocated_ = 0, peak_ = 0;
  bool pins_host_ = false;
  std::map<void*, std::size_t> pinned_;
  int64_t pinned_fetches_ = 0;
};

}  // namespace spgemmd::testing
