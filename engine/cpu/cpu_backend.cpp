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
#include "src/huge_pages.hpp"
#include "src/parallel.hpp"

namespace spgemm {
namespace {

using cpu::as_cpu;
using cpu::byte_counter;
using cpu::cpu_matrix;
using cpu::job_memory;

// Rows [row_begin, row_end) of `from` at the end of `to` (same columns).
template <typename T>
void append_row_block(const csr_matrix<T>& from, std::int64_t row_begin, std::int64_t row_end, csr_matrix<T>& to) {
  if (row_begin < 0 || row_end < row_begin || row_end > from.rows || from.cols != to.cols) {
    throw_bad_input("rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) + ") of a " +
                    std::to_string(from.rows) + " x " + std::to_string(from.cols) + " matrix cannot go to one of " +
                    std::to_string(to.cols) + " columns");
  }
  const offset_t first = from.row_offsets[row_begin], shift = to.nnz() - first;
  const offset_t last = from.row_offsets[row_end];
  to.row_offsets.reserve(to.row_offsets.size() + static_cast<std::size_t>(row_end - row_begin));
  to.col_indices.reserve(to.col_indices.size() + static_cast<std::size_t>(last - first));
  to.values.reserve(to.values.size() + static_cast<std::size_t>(last - first));
  for (std::int64_t r = row_begin + 1; r <= row_end; ++r) to.row_offsets.push_back(from.row_offsets[r] + shift);
  to.col_indices.insert(to.col_indices.end(), from.col_indices.begin() + first, from.col_indices.begin() + last);
  to.values.insert(to.values.end(), from.values.begin() + first, from.values.begin() + last);
  to.rows += row_end - row_begin;
}

// Rows [row_begin, row_end) of `from` handed to `sink` from its own arrays
// (only the offsets are copied, to rebase them).
template <typename T>
void hand_row_block(const csr_matrix<T>& from, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink) {
  require_rows_within(row_begin, row_end, from.rows);
  const offset_t first = from.row_offsets[row_begin];
  std::vector<offset_t> offsets(from.row_offsets.begin() + row_begin, from.row_offsets.begin() + row_end + 1);
  for (offset_t& o : offsets) o -= first;
  sink.piece(rows_sink::array::row_offsets, 0, offsets.data(), offsets.size() * sizeof(offset_t));
  const auto n = static_cast<std::size_t>(offsets.back());
  if (n == 0) return;
  sink.piece(rows_sink::array::col_indices, 0, from.col_indices.data() + first, n * sizeof(index_t));
  sink.piece(rows_sink::array::values, 0, from.values.data() + first, n * sizeof(T));
}

// Copies the rows of an upload into a host matrix as they arrive: appended
// into arrays reserved at the start, so memory is committed as rows arrive,
// not for what the upload's header claims.
template <typename T>
class cpu_matrix_writer final : public matrix_writer {
 public:
  cpu_matrix_writer(const matrix_info& info, const host_csr_arrays& arrays, std::shared_ptr<byte_counter> counter)
      : matrix_writer(info, arrays), counter_(std::move(counter)) {
    m_.rows = info.rows;
    m_.cols = info.cols;
    reserve_huge(m_.row_offsets, static_cast<std::size_t>(info.rows) + 1);
    reserve_huge(m_.col_indices, static_cast<std::size_t>(info.nnz));
    reserve_huge(m_.values, static_cast<std::size_t>(info.nnz));
  }

  std::shared_ptr<stored_matrix> finish() override {
    require_complete();
    return std::make_shared<cpu_matrix>(std::move(m_), counter_);
  }

 private:
  void copy(std::int64_t row_begin, std::int64_t row_end) override {
    // Offsets up to row_begin's are here already (none before the first copy).
    const offset_t* offsets = arrays_.row_offsets;
    m_.row_offsets.insert(m_.row_offsets.end(), offsets + m_.row_offsets.size(), offsets + row_end + 1);
    const offset_t first = offsets[row_begin], last = offsets[row_end];
    m_.col_indices.insert(m_.col_indices.end(), arrays_.col_indices + first, arrays_.col_indices + last);
    const T* values = static_cast<const T*>(arrays_.values);
    m_.values.insert(m_.values.end(), values + first, values + last);
  }

  std::shared_ptr<byte_counter> counter_;
  csr_matrix<T> m_;
};

class cpu_backend final : public backend {
 public:
  cpu_backend(int threads, int index)
      : threads_(detail::resolve_threads(threads)), name_(index == 0 ? "cpu" : "cpu:" + std::to_string(index)) {}

  std::string name() const override { return name_; }
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

  std::vector<offset_t> sample_row_offsets(const stored_matrix& m, std::int64_t stride) override {
    return std::visit([&](const auto& held) { return sampled_row_offsets(held.row_offsets, stride); },
                      as_cpu(m).matrix());
  }

  void fetch_to(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink) override {
    std::visit([&](const auto& held) { hand_row_block(held, row_begin, row_end, sink); }, as_cpu(m).matrix());
  }

  void append_rows(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, any_csr& out) override {
    std::visit(
        [&](const auto& held, auto& to) {
          using T = typename std::decay_t<decltype(held)>::value;
          using U = typename std::decay_t<decltype(to)>::value;
          if constexpr (!std::is_same_v<T, U>) {
            throw_bad_input("rows to append are of another value type than the matrix they go to");
          } else {
            append_row_block(held, row_begin, row_end, to);
          }
        },
        as_cpu(m).matrix(), out);
  }

  // C as the bound of nnz(C) allows (compute_product_stats: never more
  // entries in a row than its products, B's columns or the span of the
  // columns its rows of B reach), Gustavson's workspace, and the operands
  // converted to C's value type where they differ.
  memory_estimate estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                    const multiply_options& options) override {
    return estimate(a, b, nullptr, {}, options);
  }

  std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                          const multiply_options& options, std::size_t memory_limit,
                                          const cancel_token& cancel, std::size_t* peak_bytes) override {
    return run(a, b, nullptr, {}, options, memory_limit, cancel, peak_bytes);
  }
  using backend::multiply;

  // As estimate_multiply, C bounded by M's rows too where M allows (C<M>).
  memory_estimate estimate_masked_multiply(const stored_matrix& a, const stored_matrix& b, const stored_matrix& mask,
                                           const mask_options& how, const multiply_options& options) override {
    return estimate(a, b, &mask, how, options);
  }

  std::shared_ptr<stored_matrix> masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                 const stored_matrix& mask, const mask_options& how,
                                                 const multiply_options& options, std::size_t memory_limit,
                                                 const cancel_token& cancel, std::size_t* peak_bytes) override {
    return run(a, b, &mask, how, options, memory_limit, cancel, peak_bytes);
  }

  // C as its bound; besides, the copies of the operands in C's value type,
  // two transposes of A (ops per column) and a few bytes per entry and
  // element (flags, orders, a dense vector): held whole while the op runs.
  memory_estimate estimate_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands) override {
    std::vector<matrix_info> infos;
    for (const stored_matrix* m : operands) infos.push_back(as_cpu(*m).info());
    const matrix_info c = result_bound(op, infos);
    std::int64_t nnz = c.nnz;
    if (const auto* rows = std::get_if<extract_rows>(&op)) {
      const auto& offsets = std::visit([](const auto& m) -> const std::vector<offset_t>& { return m.row_offsets; },
                                       as_cpu(*operands[0]).matrix());
      nnz = 0;
      for (const std::int64_t r : rows->rows) nnz += offsets[r + 1] - offsets[r];
    }
    const matrix_info& a = infos[0];
    memory_estimate e;
    e.output_bytes = matrix_info{c.rows, c.cols, nnz, c.type}.bytes();
    for (const matrix_info& m : infos) e.workspace_bytes += matrix_info{m.rows, m.cols, m.nnz, c.type}.bytes();
    e.workspace_bytes += 2 * matrix_info{a.cols, a.rows, a.nnz, c.type}.bytes() +
                         static_cast<std::size_t>(a.nnz) * (1 + sizeof(offset_t)) +
                         static_cast<std::size_t>(std::max(a.rows, a.cols)) * (1 + size_of(c.type));
    e.exact = false;
    e.nnz_bound = nnz;
    e.method = describe(op);
    return e;
  }

  std::shared_ptr<stored_matrix> run_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands,
                                        std::size_t memory_limit, const cancel_token& cancel,
                                        std::size_t* peak_bytes) override {
    cancel.throw_if_cancelled();
    const std::size_t bytes = estimate_op(op, operands).total();
    job_memory memory(memory_limit, describe(op), counter_.get());
    any_csr c;
    {
      const job_memory::hold held(memory, bytes);
      std::vector<const any_csr*> matrices;
      for (const stored_matrix* m : operands) matrices.push_back(&as_cpu(*m).matrix());
      c = cpu_run_op(op, matrices);
    }
    if (peak_bytes != nullptr) *peak_bytes = memory.peak_bytes();
    return std::make_shared<cpu_matrix>(std::move(c), counter_);
  }

  // C exactly as the structure it is given, the numeric pass's workspace,
  // and the operands converted to C's value type where they differ.
  memory_estimate estimate_multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                            const stored_matrix& structure,
                                            const multiply_options& options) override {
    check_algorithm(options.algo);
    if (!options.semiring.is_plus_times()) throw_bad_input("numeric-only products run plus_times only");
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
    if (!options.semiring.is_plus_times()) throw_bad_input("numeric-only products run plus_times only");
    const auto& ma = as_cpu(a).matrix();
    const auto& mb = as_cpu(b).matrix();
    const value_type out = output_type_of(info_of(ma), info_of(mb), options);
    const matrix_info info = checked_structure(info_of(ma), info_of(mb), structure.info(), out);
    cancel.throw_if_cancelled();
    job_memory memory(memory_limit, "gustavson numeric", counter_.get());
    any_csr c;
    {
      const job_memory::hold arrays(memory, info.bytes());
      // Branches, not a generic lambda: clang (the sanitizer build) left the
      // member template's instances a generic lambda names undefined.
      const any_csr& st = as_cpu(structure).matrix();
      if (const auto* s32 = std::get_if<csr_matrix<float>>(&st)) {
        c = out == value_type::f32 ? any_csr(numeric_product<float>(ma, mb, *s32, memory))
                                   : any_csr(numeric_product<double>(ma, mb, *s32, memory));
      } else {
        const auto& s64 = std::get<csr_matrix<double>>(st);
        c = out == value_type::f32 ? any_csr(numeric_product<float>(ma, mb, s64, memory))
                                   : any_csr(numeric_product<double>(ma, mb, s64, memory));
      }
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

  // From this or another CPU backend: a copy of the rows, counted here.
  std::shared_ptr<stored_matrix> copy_rows(const stored_matrix& m, std::int64_t row_begin,
                                           std::int64_t row_end) override {
    const auto& held = as_cpu(m).matrix();
    require_rows_within(row_begin, row_end, info_of(held).rows);
    return std::make_shared<cpu_matrix>(row_block(held, row_begin, row_end), counter_);
  }

  row_work work_per_row(const stored_matrix& a, const stored_matrix& b) override {
    return std::visit([](const auto& x, const auto& y) { return compute_row_work(x, y); }, as_cpu(a).matrix(),
                      as_cpu(b).matrix());
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
  // A product's operands, checked: the algorithm, the semiring, the shapes
  // of A, B and the mask (where there is one).
  struct product_operands {
    const any_csr& a;
    const any_csr& b;
    const any_csr* mask;
    matrix_info ia, ib;
  };
  static product_operands checked(const stored_matrix& a, const stored_matrix& b, const stored_matrix* mask,
                          const multiply_options& options) {
    check_algorithm(options.algo);
    check_semiring(options.semiring);
    product_operands o{as_cpu(a).matrix(), as_cpu(b).matrix(), mask ? &as_cpu(*mask).matrix() : nullptr, {}, {}};
    o.ia = info_of(o.a);
    o.ib = info_of(o.b);
    require_conformable(o.ia, o.ib);
    if (o.mask != nullptr) require_mask_shape(info_of(*o.mask), o.ia.rows, o.ib.cols);
    return o;
  }

  // With a mask that allows (C<M>), C is bounded by M's rows too.
  memory_estimate estimate(const stored_matrix& a, const stored_matrix& b, const stored_matrix* mask,
                           const mask_options& how, const multiply_options& options) {
    const product_operands o = checked(a, b, mask, options);
    const bool bounded = o.mask != nullptr && !how.complement;
    const auto stats = std::visit(
        [&](const auto& x, const auto& y) {
          if (!bounded) return compute_product_stats(x, y);
          return std::visit([&](const auto& m) { return compute_product_stats(x, y, m.row_offsets); }, *o.mask);
        },
        o.a, o.b);
    const value_type out = output_type_of(o.ia, o.ib, options);
    memory_estimate e;
    e.output_bytes = matrix_info{o.ia.rows, o.ib.cols, stats.nnz_c_bound, out}.bytes();
    e.workspace_bytes = cpu::gustavson_workspace_bytes(o.ia.rows, o.ib.cols, size_of(out), threads_) +
                        converted_bytes(o.ia, out) + converted_bytes(o.ib, out);
    e.fixed_workspace_bytes = cpu::gustavson_accumulator_bytes(o.ib.cols, size_of(out), threads_);
    e.exact = false;
    e.products = stats.products;
    e.method = "gustavson";
    e.algo = algorithm::gustavson;
    if (!options.semiring.is_plus_times()) e.method += " " + to_string(options.semiring);
    if (o.mask != nullptr) e.method += how.complement ? " <!M>" : " <M>";
    return e;
  }

  std::shared_ptr<stored_matrix> run(const stored_matrix& a, const stored_matrix& b, const stored_matrix* mask,
                                     const mask_options& how, const multiply_options& options,
                                     std::size_t memory_limit, const cancel_token& cancel, std::size_t* peak_bytes) {
    const product_operands o = checked(a, b, mask, options);
    cpu::mask_rows rows;
    if (o.mask != nullptr) rows = std::visit([&](const auto& m) { return cpu::mask_rows::of(m, how); }, *o.mask);
    const value_type out = output_type_of(o.ia, o.ib, options);
    cancel.throw_if_cancelled();
    job_memory memory(memory_limit, "gustavson", counter_.get());
    any_csr c = out == value_type::f32 ? any_csr(product<float>(o.a, o.b, options.semiring, rows, memory, cancel))
                                       : any_csr(product<double>(o.a, o.b, options.semiring, rows, memory, cancel));
    cancel.throw_if_cancelled();
    if (peak_bytes != nullptr) *peak_bytes = memory.peak_bytes();
    return std::make_shared<cpu_matrix>(std::move(c), counter_);
  }

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
  csr_matrix<T> product(const any_csr& a, const any_csr& b, const semiring& ring, const cpu::mask_rows& mask,
                        job_memory& memory, const cancel_token& cancel) const {
    csr_matrix<T> c;
    with_operands<T>(a, b, memory, [&](const csr_matrix<T>& x, const csr_matrix<T>& y) {
      c = cpu::gustavson(x, y, ring, mask, threads_, memory, cancel);
    });
    return c;
  }

  int threads_;
  std::string name_;
  std::shared_ptr<byte_counter> counter_ = std::make_shared<byte_counter>();
};

}  // namespace

std::shared_ptr<backend> make_cpu_backend(int threads, int index) {
  return std::make_shared<cpu_backend>(threads, index);
}

}  // namespace spgemm
