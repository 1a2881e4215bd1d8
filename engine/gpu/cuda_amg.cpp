// The GPU backend's part of algebraic multigrid (amg/operations.hpp): the
// passes of engine/amg/gpu/ on its stored matrices, on one stream per
// operations object; vectors in device memory from the device's pool. A pass
// that returns a matrix runs on a memory resource of its own, capped at the
// limit it is given (its estimate), as a product does.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <variant>

#include "amg/gpu/gpu_passes.hpp"
#include "amg/operations.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/limiting_resource.hpp"
#include "cuda/statistics_resource.hpp"
#include "gpu/cuda_backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::gpu {
namespace {

using cuda::device_guard;

// A vector in device memory; keeps the device context alive, so that it can
// be freed after the backend is gone.
class cuda_vector final : public amg::vector {
 public:
  cuda_vector(std::shared_ptr<cuda::device_context> context, std::int64_t n, cudaStream_t stream)
      : vector(n), context_(std::move(context)), values_(context_->memory, static_cast<std::size_t>(n), stream) {}
  ~cuda_vector() override {
    device_guard guard(context_->device);
    values_.reset();
  }
  double* data() { return values_.data(); }
  const double* data() const { return values_.data(); }

 private:
  std::shared_ptr<cuda::device_context> context_;
  cuda::device_buffer<double> values_;
};

class cuda_factor final : public amg::dense_factor {
 public:
  cuda_factor(std::shared_ptr<cuda::device_context> context, std::int64_t rows, cudaStream_t stream)
      : n(rows), context_(std::move(context)), inverse_(context_->memory, static_cast<std::size_t>(rows * rows), stream) {}
  ~cuda_factor() override {
    device_guard guard(context_->device);
    inverse_.reset();
  }
  std::size_t bytes() const override { return inverse_.bytes(); }
  double* data() { return inverse_.data(); }
  const double* data() const { return inverse_.data(); }
  const std::int64_t n;

 private:
  std::shared_ptr<cuda::device_context> context_;
  cuda::device_buffer<double> inverse_;
};

// What is left of a limit once `used` is taken.
std::size_t left_of(std::size_t limit, std::size_t used) { return limit > used ? limit - used : 0; }

const double* data(const amg::vector& v) { return static_cast<const cuda_vector&>(v).data(); }
double* data(amg::vector& v) { return static_cast<cuda_vector&>(v).data(); }

const cuda::device_csr<double>& f64(const stored_matrix& m) {
  const auto* s = dynamic_cast<const cuda_stored_matrix*>(&m);
  if (s == nullptr) throw_bad_input("the matrix is stored on another backend");
  const auto* d = std::get_if<cuda::device_csr<double>>(&s->matrix());
  if (d == nullptr) throw_bad_input("algebraic multigrid takes f64 matrices");
  return *d;
}

class cuda_operations final : public amg::operations {
 public:
  explicit cuda_operations(std::shared_ptr<cuda::device_context> context)
      : context_(std::move(context)), stream_(context_->streams.acquire()) {}
  ~cuda_operations() override {
    const device_guard on(context_->device);
    (void)cudaStreamSynchronize(stream());
  }

  std::unique_ptr<amg::vector> zeros(std::int64_t n) override {
    const device_guard on(context_->device);  // calls may come from any thread
    auto v = std::make_unique<cuda_vector>(context_, n, stream());
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(v->data(), 0, v->bytes(), stream()));
    return v;
  }

  std::unique_ptr<amg::vector> upload(const double* values, std::int64_t n) override {
    const device_guard on(context_->device);
    auto v = std::make_unique<cuda_vector>(context_, n, stream());
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(v->data(), values, v->bytes(), cudaMemcpyHostToDevice, stream()));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream()));  // the caller's array may go
    return v;
  }

  std::unique_ptr<amg::vector> hashed(std::int64_t n) override {
    const device_guard on(context_->device);
    auto v = std::make_unique<cuda_vector>(context_, n, stream());
    amg::gpu::hashed(n, data(*v), stream());
    return v;
  }

  void download(const amg::vector& v, double* out) override {
    const device_guard on(context_->device);
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(out, data(v), v.bytes(), cudaMemcpyDeviceToHost, stream()));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  void copy(const amg::vector& from, amg::vector& to) override {
    const device_guard on(context_->device);
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(data(to), data(from), from.bytes(), cudaMemcpyDeviceToDevice, stream()));
  }

  void axpby(double a, const amg::vector& x, double b, amg::vector& y) override {
    const device_guard on(context_->device);
    amg::gpu::axpby(y.size(), a, data(x), b, data(y), stream());
  }

  void scaled_axpby(double a, const amg::vector& d, const amg::vector& x, double b, amg::vector& y) override {
    const device_guard on(context_->device);
    amg::gpu::scaled_axpby(y.size(), a, data(d), data(x), b, data(y), stream());
  }

  double dot(const amg::vector& x, const amg::vector& y) override {
    const device_guard on(context_->device);
    return amg::gpu::dot(x.size(), data(x), data(y), context_->memory, stream());
  }

  void lanczos(const stored_matrix& a, const amg::vector& s, int steps, std::vector<double>& alpha,
               std::vector<double>& beta) override {
    const device_guard on(context_->device);
    const std::int64_t n = s.size();
    alpha.clear();
    beta.clear();
    if (n == 0 || steps < 1) return;
    auto v = hashed(n);
    amg::gpu::axpby(n, 0.0, data(*v), 1.0 / std::sqrt(dot(*v, *v)), data(*v), stream());
    auto u = zeros(n);
    amg::gpu::scaled_axpby(n, 1.0, data(s), data(*v), 0.0, data(*u), stream());
    auto w = zeros(n);
    auto previous = zeros(n);
    amg::gpu::lanczos(f64(a).view(), data(s), data(*v), data(*u), data(*w), data(*previous),
                      static_cast<int>(std::min<std::int64_t>(steps, n)), alpha, beta, context_->memory, stream());
  }

  void spmv(const stored_matrix& a, const amg::vector& x, double alpha, double beta, amg::vector& y) override {
    const device_guard on(context_->device);
    amg::gpu::spmv(f64(a).view(), data(x), alpha, beta, data(y), stream());
  }

  std::unique_ptr<amg::vector> inverse_diagonal(const stored_matrix& a, bool square_root) override {
    const device_guard on(context_->device);
    const cuda::csr_view<double> m = f64(a).view();
    auto out = std::make_unique<cuda_vector>(context_, m.rows, stream());
    write_inverse_diagonals(m, square_root ? nullptr : out->data(), square_root ? out->data() : nullptr);
    return out;
  }

  diagonal_inverses inverse_diagonals(const stored_matrix& a) override {
    const device_guard on(context_->device);
    const cuda::csr_view<double> m = f64(a).view();
    auto inverse = std::make_unique<cuda_vector>(context_, m.rows, stream());
    auto inverse_sqrt = std::make_unique<cuda_vector>(context_, m.rows, stream());
    write_inverse_diagonals(m, inverse->data(), inverse_sqrt->data());
    return {std::move(inverse), std::move(inverse_sqrt)};
  }

  int node_size(const stored_matrix& a) override {
    const device_guard on(context_->device);
    const auto* s = dynamic_cast<const cuda_stored_matrix*>(&a);
    if (s == nullptr) throw_bad_input("the matrix is stored on another backend");
    return planner::largest_size(s->block_sizes(stream()));
  }

  std::shared_ptr<stored_matrix> strength(const stored_matrix& a, int block_size, double theta,
                                          std::size_t memory_limit) override {
    const device_guard on(context_->device);
    const auto* s = dynamic_cast<const cuda_stored_matrix*>(&a);
    if (block_size > 1 && (s == nullptr || !(s->block_sizes(stream()) & (1u << block_size)))) {
      throw_bad_input("strength: the matrix is not made of dense " + std::to_string(block_size) + "x" +
                      std::to_string(block_size) + " blocks");
    }
    return limited(memory_limit, "strength", [&](cuda::memory_resource& memory) {
      return amg::gpu::strength(f64(a).view(), block_size, theta, memory, stream());
    });
  }

  amg::aggregation aggregate(const stored_matrix& graph, std::size_t memory_limit) override {
    const device_guard on(context_->device);
    const auto* g = dynamic_cast<const cuda_stored_matrix*>(&graph);
    if (g == nullptr) throw_bad_input("the matrix is stored on another backend");
    amg::aggregation out;
    out.aggregates = limited(memory_limit, "aggregate", [&](cuda::memory_resource& memory) {
      amg::gpu::aggregates found = amg::gpu::aggregate(g->structure(), memory, stream());
      out.count = found.count;
      out.rounds = found.rounds;
      return std::move(found.matrix);
    });
    return out;
  }

  amg::tentative_prolongator tentative(const stored_matrix& aggregates, std::int64_t count, const amg::vector& b,
                                       int rows_per_node, int columns, std::size_t memory_limit) override {
    const device_guard on(context_->device);
    const auto* agg = dynamic_cast<const cuda_stored_matrix*>(&aggregates);
    if (agg == nullptr) throw_bad_input("the matrix is stored on another backend");
    amg::tentative_prolongator out;
    auto coarse = std::make_unique<cuda_vector>(context_, count * columns * columns, stream());
    out.t = limited(left_of(memory_limit, coarse->bytes()), "tentative", [&](cuda::memory_resource& memory) {
      amg::gpu::tentative_prolongator t =
          amg::gpu::tentative(agg->structure(), count, data(b), rows_per_node, columns, memory, stream());
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(coarse->data(), t.coarse.data(), coarse->bytes(), cudaMemcpyDeviceToDevice,
                                        stream()));
      return std::move(t.t);
    });
    out.coarse = std::move(coarse);
    return out;
  }

  std::shared_ptr<stored_matrix> smooth_prolongator(const stored_matrix& t, const stored_matrix& at,
                                                    const amg::vector& dinv, double omega,
                                                    std::size_t memory_limit) override {
    const device_guard on(context_->device);
    return limited(memory_limit, "prolongator", [&](cuda::memory_resource& memory) {
      return amg::gpu::smooth_prolongator(f64(t).view(), f64(at).view(), data(dinv), omega, memory, stream());
    });
  }

  std::unique_ptr<amg::dense_factor> factor(const stored_matrix& a, std::size_t memory_limit) override {
    const device_guard on(context_->device);
    const cuda::csr_view<double> m = f64(a).view();
    auto f = std::make_unique<cuda_factor>(context_, m.rows, stream());
    cuda::limiting_resource limit(context_->memory, left_of(memory_limit, f->bytes()), "coarse factor");
    if (!amg::gpu::invert(m, f->data(), limit, stream())) {
      throw_bad_input("the coarsest level (" + std::to_string(m.rows) + " rows) is singular: a zero pivot");
    }
    return f;
  }

  void solve(const amg::dense_factor& f, const amg::vector& b, amg::vector& x) override {
    const device_guard on(context_->device);
    const auto& inverse = static_cast<const cuda_factor&>(f);
    amg::gpu::dense_multiply(inverse.n, inverse.data(), data(b), data(x), stream());
  }

 private:
  // 1 / a_ii into `inverse`, |a_ii|^-1/2 into `inverse_sqrt` (either may be
  // null); error(bad_input) naming the first row without a nonzero diagonal.
  void write_inverse_diagonals(const cuda::csr_view<double>& m, double* inverse, double* inverse_sqrt) {
    const std::int64_t bad = amg::gpu::inverse_diagonals(m, inverse, inverse_sqrt, context_->memory, stream());
    if (bad >= 0) throw_bad_input("row " + std::to_string(bad) + " has no nonzero diagonal entry");
  }

  cudaStream_t stream() const { return stream_.get(); }

  // A pass's matrix, made on a resource capped at `limit`, complete and
  // stored (its memory then the device's).
  template <typename T, typename Pass>
  std::shared_ptr<stored_matrix> make(std::size_t limit, const char* pass, Pass run, T*) {
    cuda::limiting_resource capped(context_->memory, limit, pass);
    cuda::statistics_resource held(capped);
    cuda::device_csr<T> m = run(held);
    m.bind_resource(context_->memory);
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream()));
    return std::make_shared<cuda_stored_matrix>(context_, cuda::any_device_csr(std::move(m)));
  }
  template <typename Pass>
  std::shared_ptr<stored_matrix> limited(std::size_t limit, const char* pass, Pass run) {
    using csr = decltype(run(std::declval<cuda::memory_resource&>()));
    return make(limit, pass, run, static_cast<typename csr::value*>(nullptr));
  }

  std::shared_ptr<cuda::device_context> context_;
  cuda::stream_pool::lease stream_;
};

}  // namespace

std::unique_ptr<amg::operations> cuda_backend::amg_operations() {
  return std::make_unique<cuda_operations>(context_);
}

}  // namespace spgemm::gpu
