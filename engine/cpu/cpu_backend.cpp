// The CPU backend: matrices in host memory, products by Gustavson's method.
// The embedded default on hosts without a GPU, so the service always starts.
// Every byte a product or transpose allocates is counted against its
// estimate (cpu/host_memory.hpp), as on the GPU.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "amg/operations.hpp"
#include "cpu/cpu_amg.hpp"
#include "cpu/cpu_matrix.hpp"
#include "cpu/gustavson.hpp"
#include "cpu/host_memory.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/reference.hpp"
#include "src/parallel.hpp"

namespace spgemm {
namespace {

using cpu::as_cpu;
using cpu::byte_counter;
using cpu::cpu_matrix;
using cpu::job_memory;

// Copies the rows of an upload into a host matrix as they arrive.
template <typename T>
class cpu_matrix_writer final : public matrix_writer {
 public:
  cpu_matrix_writer(const matrix_info& info, const host_csr_arrays& arrays, std::shared_ptr<byte_counter> counter)
      : matrix_writer(info, arrays), counter_(std::move(counter)) {
    m_.rows = info.rows;
    m_.cols = info.cols;
    m_.row_offsets.resize(static_cast<std::size_t>(info.rows) + 1);
    m_.col_indices.resize(static_cast<std::size_t>(info.nnz));
    m_.values.resize(static_cast<std::size_t>(info.nnz));
  }

  std::shared_ptr<stored_matrix> finish() override {
    require_complete();
    return std::make_shared<cpu_matrix>(std::move(m_), counter_);
  }

 private:
  void copy(std::int64_t row_begin, std::int64_t row_end) override {
    std::copy(arrays_.row_offsets + row_begin, arrays_.row_offsets + row_end + 1, m_.row_offsets.begin() + row_begin);
    const offset_t first = arrays_.row_offsets[row_begin], last = arrays_.row_offsets[row_end];
    std::copy(arrays_.col_indices + first, arrays_.col_indices + last, m_.col_indices.begin() + first);
    const T* values = static_cast<const T*>(arrays_.values);
    std::copy(values + first, values + last, m_.values.begin() + first);
  }

  std::shared_ptr<byte_counter> counter_;
  csr_matrix<T> m_;
};

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(int threads) : threads_(detail::resolve_threads(threads)) {}

  std::string name() const override { return "cpu"; }
  std::string description() const override {
    return "CPU, " + std::to_string(threads_) + " threads, Gustavson";
  }
  bool is_gpu() const override { return false; }

  backend_memory memory() const override {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return {page * static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)),
            page * static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)), counter_->in_use(), counter_->peak()};
  }
  void reset_peak() override { counter_->reset_peak(); }

  std::shared_ptr<stored_matrix> store(const any_csr& m) override {
    return std::make_shared<cpu_matrix>(m, counter_);
  }

  std::unique_ptr<matrix_writer> open_writer(const matrix_info& info, const host_csr_arrays& arrays) override {
    if (info.type == value_type::f32) return std::make_unique<cpu_matrix_writer<float>>(info, arrays, counter_);
    return std::make_unique<cpu_matrix_writer<double>>(info, arrays, counter_);
  }

  any_csr fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) override {
    const auto& held = as_cpu(m).matrix();
    if (row_begin == 0 && row_end == info_of(held).rows) return held;
    return row_block(held, row_begin, row_end);
  }

  // C as the bound of nnz(C) allows (compute_product_stats: never more
  // entries in a row than its products, B's columns or the span of the
  // columns its rows of B reach), Gustavson's workspace, and the operands
  // converted to C's value type where they differ.
  memory_estimate estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                    const multiply_options& options) override {
    check_algorithm(options.algo);
    const auto& ma = as_cpu(a).matrix();
    const auto& mb = as_cpu(b).matrix();
    const auto stats = std::visit([](const auto& x, const auto& y) { return compute_product_stats(x, y); }, ma, mb);
    const matrix_info ia = info_of(ma), ib = info_of(mb);
    const value_type out = output_type_of(ia, ib, options);
    memory_estimate e;
    e.output_bytes = matrix_info{ia.rows, ib.cols, stats.nnz_c_bound, out}.bytes();
    e.workspace_bytes = cpu::gustavson_workspace_bytes(ia.rows, ib.cols, size_of(out), threads_) +
                        converted_bytes(ia, out) + converted_bytes(ib, out);
    e.exact = false;
    e.products = stats.products;
    e.method = "gustavson";
    return e;
  }

  std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                          const multiply_options& options, std::size_t memory_limit,
                                          const cancel_token& cancel, std::size_t* peak_bytes) override {
    check_algorithm(options.algo);
    const auto& ma = as_cpu(a).matrix();
    const auto& mb = as_cpu(b).matrix();
    const matrix_info ia = info_of(ma), ib = info_of(mb);
    require_conformable(ia, ib);
    const value_type out = output_type_of(ia, ib, options);
    cancel.throw_if_cancelled();
    job_memory memory(memory_limit, "gustavson", counter_.get());
    any_csr c = out == value_type::f32 ? any_csr(product<float>(ma, mb, memory))
                                       : any_csr(product<double>(ma, mb, memory));
    cancel.throw_if_cancelled();
    if (peak_bytes != nullptr) *peak_bytes = memory.peak_bytes();
    return std::make_shared<cpu_matrix>(std::move(c), counter_);
  }
  using backend::multiply;

  // C exactly as the structure it is given, the numeric pass's workspace,
  // and the operands converted to C's value type where they differ.
  memory_estimate estimate_multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                            const stored_matrix& structure,
                                            const multiply_options& options) override {
    check_algorithm(options.algo);
    const matrix_info ia = a.info(), ib = b.info();
    const value_type out = output_type_of(ia, ib, options);
    const matrix_info c = checked_structure(ia, ib, structure.info(), out);
    memory_estimate e;
    e.output_bytes = c.bytes();
    e.workspace_bytes = cpu::gustavson_numeric_workspace_bytes(ia.rows, ib.cols, size_of(out), threads_) +
                        converted_bytes(ia, out) + converted_bytes(ib, out);
    e.exact = true;
    e.nnz_bound = c.nnz;
    e.products = std::visit([](const auto& x, const auto& y) { return compute_product_stats(x, y).products; },
                            as_cpu(a).matrix(), as_cpu(b).matrix());
    e.method = "gustavson numeric";
    return e;
  }

  std::shared_ptr<stored_matrix> multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                  const stored_matrix& structure, const multiply_options& options,
                                                  std::size_t memory_limit, const cancel_token& cancel,
                                                  std::size_t* peak_bytes) override {
    check_algorithm(options.algo);
    const auto& ma = as_cpu(a).matrix();
    const auto& mb = as_cpu(b).matrix();
    const value_type out = output_type_of(info_of(ma), info_of(mb), options);
    const matrix_info info = checked_structure(info_of(ma), info_of(mb), structure.info(), out);
    cancel.throw_if_cancelled();
    job_memory memory(memory_limit, "gustavson numeric", counter_.get());
    any_csr c;
    {
      const job_memory::hold arrays(memory, info.bytes());
      c = std::visit(
          [&](const auto& s) -> any_csr {
            if (out == value_type::f32) return numeric_product<float>(ma, mb, s, memory);
            return numeric_product<double>(ma, mb, s, memory);
          },
          as_cpu(structure).matrix());
    }
    cancel.throw_if_cancelled();
    if (peak_bytes != nullptr) *peak_bytes = memory.peak_bytes();
    return std::make_shared<cpu_matrix>(std::move(c), counter_);
  }

  void write_values(stored_matrix& m, const void* values) override {
    auto* cpu = dynamic_cast<cpu_matrix*>(&m);
    if (cpu == nullptr) throw_bad_input("the matrix is stored on another backend");
    std::visit(
        [&](auto& held) {
          using T = typename std::decay_t<decltype(held)>::value;
          std::copy_n(static_cast<const T*>(values), held.values.size(), held.values.begin());
        },
        cpu->matrix_for_values());
  }

  std::shared_ptr<stored_matrix> with_values(const stored_matrix& m, const void* values) override {
    auto copy = std::make_shared<cpu_matrix>(as_cpu(m).matrix(), counter_);
    write_values(*copy, values);
    return copy;
  }

  std::unique_ptr<amg::operations> amg_operations() override { return cpu::make_amg_operations(counter_, threads_); }

  memory_estimate estimate_transpose(const stored_matrix& a) override {
    const matrix_info ia = a.info();
    memory_estimate e;
    e.output_bytes = matrix_info{ia.cols, ia.rows, ia.nnz, ia.type}.bytes();
    e.workspace_bytes = static_cast<std::size_t>(ia.cols + 1) * sizeof(offset_t);
    e.exact = true;
    e.method = "transpose";
    return e;
  }

  std::shared_ptr<stored_matrix> transpose(const stored_matrix& a, const cancel_token& cancel,
                                           std::size_t* peak_bytes) override {
    cancel.throw_if_cancelled();
    // Its arrays are sized by A's shape alone: the estimate is what it holds.
    const std::size_t bytes = estimate_transpose(a).total();
    job_memory memory(bytes, "transpose", counter_.get());
    any_csr t;
    {
      const job_memory::hold arrays(memory, bytes);
      t = std::visit([](const auto& x) -> any_csr { return cpu_transpose(x); }, as_cpu(a).matrix());
    }
    if (peak_bytes != nullptr) *peak_bytes = memory.peak_bytes();
    return std::make_shared<cpu_matrix>(std::move(t), counter_);
  }

 private:
  static void check_algorithm(algorithm algo) {
    if (algo != algorithm::automatic && algo != algorithm::gustavson) {
      throw_bad_input("algorithm '" + std::string(to_string(algo)) +
                      "' needs a GPU backend; the CPU backend runs 'gustavson' (or 'auto')");
    }
  }

  // The structure's info in C's value type: throws bad_input unless it has C's shape.
  static matrix_info checked_structure(const matrix_info& a, const matrix_info& b, const matrix_info& structure,
                                       value_type out) {
    require_conformable(a, b);
    if (structure.rows != a.rows || structure.cols != b.cols) {
      throw_bad_input("the structure of a " + std::to_string(structure.rows) + " x " + std::to_string(structure.cols) +
                      " product does not fit a " + std::to_string(a.rows) + " x " + std::to_string(b.cols) +
                      " product");
    }
    return {structure.rows, structure.cols, structure.nnz, out};
  }

  // The numeric pass on a copy of the structure S's offsets and columns.
  template <typename T, typename S>
  csr_matrix<T> numeric_product(const any_csr& a, const any_csr& b, const csr_matrix<S>& s, job_memory& memory) const {
    csr_matrix<T> c;
    c.rows = s.rows;
    c.cols = s.cols;
    c.row_offsets = s.row_offsets;
    c.col_indices = s.col_indices;
    with_operands<T>(a, b, memory, [&](const csr_matrix<T>& x, const csr_matrix<T>& y) {
      cpu::gustavson_numeric(x, y, c, threads_, memory);
    });
    return c;
  }

  // Calls f with A and B of type T: in place where they are, else converted copies.
  template <typename T, typename F>
  void with_operands(const any_csr& a, const any_csr& b, job_memory& memory, F f) const {
    auto as_t = [](const any_csr& m) -> std::shared_ptr<const csr_matrix<T>> {
      if (const auto* same = std::get_if<csr_matrix<T>>(&m)) {
        return std::shared_ptr<const csr_matrix<T>>(same, [](const csr_matrix<T>*) {});
      }
      return std::make_shared<csr_matrix<T>>(std::visit([](const auto& x) { return convert_values<T>(x); }, m));
    };
    const value_type out = value_type_of<T>();
    const job_memory::hold converted(memory, converted_bytes(info_of(a), out) + converted_bytes(info_of(b), out));
    f(*as_t(a), *as_t(b));
  }

  static std::size_t converted_bytes(const matrix_info& m, value_type out) {
    return m.type != out ? matrix_info{m.rows, m.cols, m.nnz, out}.bytes() : 0;
  }

  template <typename T>
  csr_matrix<T> product(const any_csr& a, const any_csr& b, job_memory& memory) const {
    csr_matrix<T> c;
    with_operands<T>(a, b, memory, [&](const csr_matrix<T>& x, const csr_matrix<T>& y) {
      c = cpu::gustavson(x, y, threads_, memory);
    });
    return c;
  }

  int threads_;
  std::shared_ptr<byte_counter> counter_ = std::make_shared<byte_counter>();
};

}  // namespace

std::shared_ptr<backend> make_cpu_backend(int threads) { return std::make_shared<cpu_backend>(threads); }

}  // namespace spgemm
