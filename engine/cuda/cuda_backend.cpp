#include "cuda/cuda_backend.hpp"

#include <cstdio>
#include <string>
#include <type_traits>

#include "block/block.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_ops.hpp"
#include "cuda/limiting_resource.hpp"
#include "cuda/statistics_resource.hpp"
#include "cuda/transpose.hpp"
#include "esc/esc.hpp"
#include "hash/hash.hpp"
#include "planner/planner.hpp"
#include "rmerge/rmerge.hpp"
#include "spgemm/errors.hpp"

namespace spgemm {
namespace cuda {
namespace {

// A view of `m` with values of type T: the stored values when they already
// are T, else a converted copy held in `converted`.
template <typename T>
struct operand {
  device_buffer<T> converted;
  csr_view<T> view;
};

template <typename T>
operand<T> operand_of(const any_device_csr& m, memory_resource& memory, cudaStream_t stream) {
  operand<T> out;
  std::visit(
      [&](const auto& stored) {
        using S = typename std::decay_t<decltype(stored)>::value;
        const csr_view<S> v = stored.view();
        out.view = {v.rows, v.cols, v.nnz, v.row_offsets, v.col_indices, nullptr};
        if constexpr (std::is_same_v<S, T>) {
          out.view.values = v.values;
        } else {
          out.converted = convert_values<T, S>(v.values, static_cast<std::size_t>(v.nnz), memory, stream);
          out.view.values = out.converted.data();
        }
      },
      m);
  return out;
}

structure_view structure_of(const any_device_csr& m) {
  return std::visit([](const auto& d) { return d.view().structure(); }, m);
}

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

cuda_stored_matrix::cuda_stored_matrix(std::shared_ptr<device_context> context, any_device_csr m)
    : context_(std::move(context)), matrix_(std::move(m)) {
  std::visit([&](auto& d) { d.bind_stream(context_->release_stream); }, matrix_);
}

cuda_stored_matrix::~cuda_stored_matrix() {
  // Free on the device that holds the memory.
  int previous = -1;
  (void)cudaGetDevice(&previous);
  if (previous != context_->device) (void)cudaSetDevice(context_->device);
  matrix_ = any_device_csr{};
  if (previous >= 0 && previous != context_->device) (void)cudaSetDevice(previous);
}

matrix_info cuda_stored_matrix::info() const {
  return std::visit([](const auto& d) { return d.info(); }, matrix_);
}

const rmerge::row_stats& cuda_stored_matrix::row_stats(cudaStream_t stream) const {
  std::call_once(row_stats_once_, [&] {
    row_stats_ = rmerge::compute_row_stats(structure_of(matrix_), context_->memory, stream);
  });
  return row_stats_;
}

block::size_mask cuda_stored_matrix::block_sizes(cudaStream_t stream) const {
  std::call_once(block_sizes_once_,
                 [&] { block_sizes_ = block::detect_sizes(structure_of(matrix_), context_->memory, stream); });
  return block_sizes_;
}

cuda_backend::cuda_backend(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || ordinal < 0 || ordinal >= count) {
    (void)cudaGetLastError();
    throw error(error_kind::device_failure,
                "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(status == cudaSuccess ? count : 0) +
                    " visible" + (status == cudaSuccess ? "" : std::string(": ") + cudaGetErrorString(status)) + ")");
  }
  context_ = std::make_shared<device_context>(ordinal);
}

std::string cuda_backend::name() const { return "cuda:" + std::to_string(context_->device); }

std::string cuda_backend::description() const { return context_->gpu_name + ", " + gib(context_->total_bytes); }

backend_memory cuda_backend::memory() const {
  device_guard guard(context_->device);
  backend_memory m;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SPGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  m.total_bytes = total_bytes;
  m.free_bytes = free_bytes;
  m.in_use_bytes = context_->memory.in_use_bytes();
  m.peak_bytes = context_->memory.peak_bytes();
  return m;
}

void cuda_backend::reset_peak() { context_->memory.reset_peak(); }

const cuda_stored_matrix& cuda_backend::own(const stored_matrix& m, const char* what) const {
  const auto* d = dynamic_cast<const cuda_stored_matrix*>(&m);
  if (d == nullptr || &d->context() != context_.get()) {
    throw_bad_input(std::string(what) + " is not stored on " + name());
  }
  return *d;
}

std::shared_ptr<stored_matrix> cuda_backend::keep(any_device_csr m, cudaStream_t stream) {
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::make_shared<cuda_stored_matrix>(context_, std::move(m));
}

std::shared_ptr<stored_matrix> cuda_backend::store(const any_csr& m) {
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  any_device_csr d = std::visit(
      [&](const auto& host) -> any_device_csr { return upload(host, context_->memory, stream.get()); }, m);
  return keep(std::move(d), stream.get());
}

any_csr cuda_backend::fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) {
  const cuda_stored_matrix& s = own(m, "matrix to fetch");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  return std::visit([&](const auto& d) -> any_csr { return download_rows(d, row_begin, row_end, stream.get()); },
                    s.matrix());
}

namespace {

void require_gpu_algorithm(algorithm algo) {
  if (algo == algorithm::gustavson) throw_bad_input("algorithm 'gustavson' runs on the CPU backend only");
}

// The method a job runs: the one asked for, or the planner's choice for
// automatic (from the shape of A's rows and the block sizes A and B share;
// see engine/planner/planner.hpp).
struct resolved {
  algorithm algo = algorithm::hash;
  int block_size = 1;   // algorithm::block: the size A and B share (1: none)
  std::string reason;   // "" unless the planner chose
};

resolved resolve(algorithm asked, const cuda_stored_matrix& a, const cuda_stored_matrix& b,
                 const rmerge::row_stats& a_rows, cudaStream_t stream) {
  if (asked != algorithm::automatic && asked != algorithm::block) return {asked, 1, ""};
  // The block sizes are measured once per stored matrix (kept with it).
  const int block_size = block::common_size(a.block_sizes(stream), b.block_sizes(stream));
  if (asked == algorithm::block) return {asked, block_size, ""};
  const bool empty = a_rows.nnz == 0 || structure_of(b.matrix()).nnz == 0;
  const planner::choice c =
      planner::choose_method({a_rows.rows, a_rows.nnz, a_rows.max_row_length, empty, block_size});
  return {c.algo, block_size, c.reason};
}

}  // namespace

memory_estimate cuda_backend::estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                                const multiply_options& options) {
  require_gpu_algorithm(options.algo);
  const cuda_stored_matrix& sa = own(a, "left operand");
  const cuda_stored_matrix& sb = own(b, "right operand");
  const matrix_info ia = sa.info();
  const matrix_info ib = sb.info();
  require_conformable(ia, ib);
  rmerge::validate_config(options.tuning.rmerge);
  const value_type out = output_type_of(ia, ib, options);
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const structure_view va = structure_of(sa.matrix());
  const structure_view vb = structure_of(sb.matrix());
  const rmerge::row_stats& a_rows = sa.row_stats(stream.get());
  const resolved r = resolve(options.algo, sa, sb, a_rows, stream.get());
  memory_estimate e;
  if (r.algo == algorithm::block) {
    e = block::estimate_multiply(va, vb, r.block_size, size_of(out), a_rows, options.tuning, context_->memory,
                                 stream.get());
  } else if (r.algo == algorithm::rmerge) {
    e = rmerge::estimate_multiply(va, vb, size_of(out), options.tuning.rmerge, a_rows, context_->memory,
                                  stream.get());
  } else if (r.algo == algorithm::esc) {
    e = esc::estimate_multiply(va, vb, size_of(out), options.tuning, context_->memory, stream.get());
  } else {
    e = hash::estimate_multiply(va, vb, size_of(out), options.tuning, context_->memory, stream.get());
  }
  if (!r.reason.empty()) e.method = "auto: " + e.method + " (" + r.reason + ")";
  // Operands of another value type are converted first and held for the whole job.
  if (ia.type != out) e.workspace_bytes += static_cast<std::size_t>(ia.nnz) * size_of(out);
  if (ib.type != out) e.workspace_bytes += static_cast<std::size_t>(ib.nnz) * size_of(out);
  return e;
}

std::shared_ptr<stored_matrix> cuda_backend::multiply(const stored_matrix& a, const stored_matrix& b,
                                                      const multiply_options& options, std::size_t memory_limit,
                                                      const cancel_token& cancel, std::size_t* peak_bytes) {
  require_gpu_algorithm(options.algo);
  const cuda_stored_matrix& sa = own(a, "left operand");
  const cuda_stored_matrix& sb = own(b, "right operand");
  const matrix_info ia = sa.info();
  const matrix_info ib = sb.info();
  require_conformable(ia, ib);
  rmerge::validate_config(options.tuning.rmerge);
  const value_type out = output_type_of(ia, ib, options);
  cancel.throw_if_cancelled();

  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const rmerge::row_stats& a_rows = sa.row_stats(stream.get());
  const resolved r = resolve(options.algo, sa, sb, a_rows, stream.get());
  // Everything the job allocates, converted operands included, is counted
  // against its estimate.
  limiting_resource limit(context_->memory, memory_limit,
                          (r.reason.empty() ? "" : "auto: ") + std::string(to_string(r.algo)));
  statistics_resource job(limit);
  auto run = [&](auto tag) -> any_device_csr {
    using T = decltype(tag);
    operand<T> oa = operand_of<T>(sa.matrix(), job, stream.get());
    operand<T> ob = operand_of<T>(sb.matrix(), job, stream.get());
    cancel.throw_if_cancelled();
    if (r.algo == algorithm::block) {
      return block::multiply<T>(oa.view, ob.view, r.block_size, a_rows, sb.row_stats(stream.get()), options.tuning,
                                job, stream.get(), cancel);
    }
    if (r.algo == algorithm::rmerge) {
      return rmerge::multiply<T>(oa.view, ob.view, options.tuning.rmerge, a_rows, job, stream.get(), cancel);
    }
    if (r.algo == algorithm::esc) return esc::multiply<T>(oa.view, ob.view, job, stream.get(), cancel, options.tuning);
    return hash::multiply<T>(oa.view, ob.view, job, stream.get(), cancel, options.tuning);
  };
  any_device_csr c = out == value_type::f32 ? run(float{}) : run(double{});
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, c);
  if (peak_bytes != nullptr) *peak_bytes = job.peak_bytes();
  return keep(std::move(c), stream.get());
}

memory_estimate cuda_backend::estimate_transpose(const stored_matrix& a) {
  const cuda_stored_matrix& s = own(a, "matrix to transpose");
  device_guard guard(context_->device);
  return cuda::estimate_transpose(s.info());
}

std::shared_ptr<stored_matrix> cuda_backend::transpose(const stored_matrix& a, const cancel_token& cancel,
                                                       std::size_t* peak_bytes) {
  const cuda_stored_matrix& s = own(a, "matrix to transpose");
  cancel.throw_if_cancelled();
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  limiting_resource limit(context_->memory, cuda::estimate_transpose(s.info()).total(), "transpose");
  statistics_resource job(limit);
  any_device_csr t = std::visit(
      [&](const auto& d) -> any_device_csr { return cuda::transpose(d.view(), job, stream.get(), cancel); },
      s.matrix());
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, t);
  if (peak_bytes != nullptr) *peak_bytes = job.peak_bytes();
  return keep(std::move(t), stream.get());
}

}  // namespace cuda

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::shared_ptr<backend> make_cuda_backend(int ordinal) { return std::make_shared<cuda::cuda_backend>(ordinal); }

}  // namespace spgemm
