#include "cpu/cpu_amg.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <variant>

#include "amg/cpu/passes.hpp"
#include "amg/independent_set_rule.hpp"
#include "cpu/cpu_matrix.hpp"
#include "planner/block_structure.hpp"
#include "src/parallel.hpp"

namespace spgemm::cpu {
namespace {

class cpu_vector final : public amg::vector {
 public:
  cpu_vector(std::int64_t n, std::shared_ptr<byte_counter> counter)
      : vector(n), values(static_cast<std::size_t>(n), 0.0), held_(std::move(counter), bytes()) {}
  std::vector<double> values;

 private:
  counted_bytes held_;
};

class cpu_factor final : public amg::dense_factor {
 public:
  cpu_factor(std::vector<double> factors, std::int64_t rows, std::shared_ptr<byte_counter> counter)
      : lu(std::move(factors)), n(rows), held_(std::move(counter), bytes()) {}
  std::size_t bytes() const override { return lu.size() * sizeof(double); }
  std::vector<double> lu;
  std::int64_t n;

 private:
  counted_bytes held_;
};

const std::vector<double>& values(const amg::vector& v) { return static_cast<const cpu_vector&>(v).values; }
std::vector<double>& values(amg::vector& v) { return static_cast<cpu_vector&>(v).values; }

const csr_matrix<double>& f64(const stored_matrix& m) {
  const auto* d = std::get_if<csr_matrix<double>>(&as_cpu(m).matrix());
  if (d == nullptr) throw_bad_input("algebraic multigrid takes f64 matrices");
  return *d;
}

// a x + b y, a term whose coefficient is 0 left out (BLAS's rule, as the
// GPU's kernels: NaN or infinity there does not spread).
double combine(double a, double x, double b, double y) {
  const double ax = a == 0 ? 0.0 : a * x;
  return b == 0 ? ax : ax + b * y;
}

// Products of rows below this many entries run on the calling thread: a
// fork costs more than they take.
constexpr std::int64_t parallel_min_nnz = 1 << 18;

class cpu_operations final : public amg::operations {
 public:
  cpu_operations(std::shared_ptr<byte_counter> counter, int threads)
      : counter_(std::move(counter)), threads_(threads) {}

  std::unique_ptr<amg::vector> zeros(std::int64_t n) override { return std::make_unique<cpu_vector>(n, counter_); }

  std::unique_ptr<amg::vector> upload(const double* v, std::int64_t n) override {
    auto out = std::make_unique<cpu_vector>(n, counter_);
    std::copy(v, v + n, out->values.begin());
    return out;
  }

  std::unique_ptr<amg::vector> hashed(std::int64_t n) override {
    auto out = std::make_unique<cpu_vector>(n, counter_);
    for (std::int64_t i = 0; i < n; ++i) out->values[static_cast<std::size_t>(i)] = amg::hashed_value(i);
    return out;
  }

  void download(const amg::vector& v, double* out) override { std::copy(values(v).begin(), values(v).end(), out); }

  void copy(const amg::vector& from, amg::vector& to) override { values(to) = values(from); }

  void axpby(double a, const amg::vector& x, double b, amg::vector& y) override {
    const auto& xs = values(x);
    auto& ys = values(y);
    for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = combine(a, xs[i], b, ys[i]);
  }

  void scaled_axpby(double a, const amg::vector& d, const amg::vector& x, double b, amg::vector& y) override {
    const auto& ds = values(d);
    const auto& xs = values(x);
    auto& ys = values(y);
    for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = combine(a, ds[i] * xs[i], b, ys[i]);
  }

  double dot(const amg::vector& x, const amg::vector& y) override {
    return std::inner_product(values(x).begin(), values(x).end(), values(y).begin(), 0.0);
  }

  void spmv(const stored_matrix& a, const amg::vector& x, double alpha, double beta, amg::vector& y) override {
    const csr_matrix<double>& m = f64(a);
    const auto& xs = values(x);
    auto& ys = values(y);
    auto rows = [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        double sum = 0;
        for (offset_t k = m.row_offsets[i]; k < m.row_offsets[i + 1]; ++k) sum += m.values[k] * xs[m.col_indices[k]];
        ys[i] = combine(alpha, sum, beta, ys[i]);
      }
    };
    const int parts = m.nnz() < parallel_min_nnz ? 1 : detail::resolve_threads(threads_);
    detail::parallel_slices(m.rows, parts, rows);
  }

  std::unique_ptr<amg::vector> inverse_diagonal(const stored_matrix& a, bool square_root) override {
    const csr_matrix<double>& m = f64(a);
    auto out = std::make_unique<cpu_vector>(m.rows, counter_);
    for (std::int64_t i = 0; i < m.rows; ++i) {
      double d = 0;
      for (offset_t k = m.row_offsets[i]; k < m.row_offsets[i + 1]; ++k) {
        if (m.col_indices[k] == i) d = m.values[k];
      }
      if (d == 0) throw_bad_input("row " + std::to_string(i) + " has no nonzero diagonal entry");
      out->values[i] = square_root ? 1.0 / std::sqrt(std::abs(d)) : 1.0 / d;
    }
    return out;
  }

  int node_size(const stored_matrix& a) override {
    const csr_matrix<double>& m = f64(a);
    return planner::largest_size(
        planner::detect_sizes(m.rows, m.cols, m.nnz(), m.row_offsets.data(), m.col_indices.data()));
  }

  std::shared_ptr<stored_matrix> strength(const stored_matrix& a, int block_size, double theta,
                                          std::size_t memory_limit) override {
    return keep(amg::cpu::strength(f64(a), block_size, theta), memory_limit, "strength");
  }

  amg::aggregation aggregate(const stored_matrix& graph, std::size_t memory_limit) override {
    const auto* g = std::get_if<csr_matrix<float>>(&as_cpu(graph).matrix());
    if (g == nullptr) throw_bad_input("aggregate: the strength graph is f32");
    const amg::cpu::node_aggregates found = amg::cpu::aggregate(*g);
    amg::aggregation out;
    out.count = found.count;
    out.rounds = found.rounds;
    out.aggregates = keep(amg::cpu::aggregation_matrix(found), memory_limit, "aggregate");
    return out;
  }

  amg::tentative_prolongator tentative(const stored_matrix& aggregates, std::int64_t count, const amg::vector& b,
                                       int rows_per_node, int columns, std::size_t memory_limit) override {
    amg::cpu::tentative_result t = amg::cpu::tentative(f64(aggregates), count, values(b), rows_per_node, columns);
    amg::tentative_prolongator out;
    out.coarse = upload(t.coarse.data(), static_cast<std::int64_t>(t.coarse.size()));
    out.t = keep(std::move(t.t), memory_limit, "tentative");
    return out;
  }

  std::shared_ptr<stored_matrix> smooth_prolongator(const stored_matrix& t, const stored_matrix& at,
                                                    const amg::vector& dinv, double omega,
                                                    std::size_t memory_limit) override {
    return keep(amg::cpu::smooth_prolongator(f64(t), f64(at), values(dinv), omega), memory_limit, "prolongator");
  }

  std::unique_ptr<amg::dense_factor> factor(const stored_matrix& a, std::size_t memory_limit) override {
    const csr_matrix<double>& m = f64(a);
    job_memory memory(memory_limit, "coarse factor", nullptr);
    const job_memory::hold dense(memory, static_cast<std::size_t>(m.rows * m.rows) * sizeof(double));
    return std::make_unique<cpu_factor>(amg::cpu::lu_factor(m), m.rows, counter_);
  }

  void solve(const amg::dense_factor& f, const amg::vector& b, amg::vector& x) override {
    const auto& lu = static_cast<const cpu_factor&>(f);
    amg::cpu::lu_solve(lu.lu, lu.n, values(b).data(), values(x).data());
  }

 private:
  // A pass's result stored, within the pass's limit.
  template <typename T>
  std::shared_ptr<stored_matrix> keep(csr_matrix<T> m, std::size_t memory_limit, const char* pass) {
    job_memory memory(memory_limit, pass, nullptr);
    const job_memory::hold result(memory, info_of(m).bytes());
    return std::make_shared<cpu_matrix>(std::move(m), counter_);
  }

  std::shared_ptr<byte_counter> counter_;
  int threads_;
};

}  // namespace

std::unique_ptr<amg::operations> make_amg_operations(std::shared_ptr<byte_counter> counter, int threads) {
  return std::make_unique<cpu_operations>(std::move(counter), threads);
}

}  // namespace spgemm::cpu
