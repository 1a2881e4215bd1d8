#include "gpu/cuda_backend.hpp"

#include <cstdio>
#include <string>
#include <type_traits>

#include "cuda/convert_values.hpp"
#include "cuda/copy_rows.hpp"
#include "cuda/csr_check.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/limiting_resource.hpp"
#include "cuda/staging_buffers.hpp"
#include "cuda/statistics_resource.hpp"
#include "gpu/method_table.hpp"
#include "matrix_ops/gpu_ops.hpp"
#include "method/method.hpp"
#include "planner/job_rules.hpp"
#include "planner/row_work.hpp"
#include "planner/statistics.hpp"
#include "spgemm/errors.hpp"
#include "transpose/transpose.hpp"

namespace spgemm {
namespace gpu {
namespace {

using cuda::any_device_csr;
using cuda::csr_view;
using cuda::device_guard;

// A view of `m` with values of type T: the stored values when they already
// are T, else a converted copy held in `converted`.
template <typename T>
struct operand {
  cuda::device_buffer<T> converted;
  csr_view<T> view;
};

template <typename T>
operand<T> operand_of(const any_device_csr& m, cuda::memory_resource& memory, cudaStream_t stream) {
  operand<T> out;
  std::visit(
      [&](const auto& stored) {
        using S = typename std::decay_t<decltype(stored)>::value;
        const csr_view<S> v = stored.view();
        out.view = {v.rows, v.cols, v.nnz, v.row_offsets, v.col_indices, nullptr};
        if constexpr (std::is_same_v<S, T>) {
          out.view.values = v.values;
        } else {
          out.converted = cuda::convert_values<T, S>(v.values, static_cast<std::size_t>(v.nnz), memory, stream);
          out.view.values = out.converted.data();
        }
      },
      m);
  return out;
}

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// What the methods read of a job's operands: kept with the stored matrices.
class stored_facts final : public method::operand_facts {
 public:
  stored_facts(const cuda_stored_matrix& a, const cuda_stored_matrix& b, cudaStream_t stream)
      : a_(a), b_(b), stream_(stream) {}
  const planner::row_stats& a_rows() const override { return a_.row_stats(stream_); }
  const planner::row_stats& b_rows() const override { return b_.row_stats(stream_); }
  int block_size() const override {
    // B's blocks are measured only where A has some (a pass over B's entries).
    const planner::size_mask a = a_.block_sizes(stream_);
    return a == 0 ? 1 : planner::common_size(a, b_.block_sizes(stream_));
  }

 private:
  const cuda_stored_matrix& a_;
  const cuda_stored_matrix& b_;
  cudaStream_t stream_;
};

// The method a job runs: the one asked for, or the planner's choice for
// automatic (planner/job_rules.hpp), and why.
struct resolved {
  const method::method* method = nullptr;
  std::string reason;  // "" unless the planner chose

  std::string name() const { return (reason.empty() ? "" : "auto: ") + std::string(to_string(method->algo)); }
};

// The methods that run what `takes` asks of a row, for error messages.
template <typename Takes>
std::string methods_that(Takes takes) {
  std::string names;
  for (const method::method* m = methods().first; m != methods().last; ++m) {
    if (takes(*m)) names += (names.empty() ? "" : ", ") + std::string(to_string(m->algo));
  }
  return names;
}

resolved resolve(const multiply_options& options, const stored_facts& facts, const cuda::structure_view& b,
                 std::size_t value_bytes, const mask_options* mask) {
  resolved r;
  if (options.algo != algorithm::automatic) {
    r.method = &methods().find(options.algo);
  } else if (mask != nullptr) {
    const planner::choice c = planner::choose_masked_method(mask->complement);
    r = {&methods().find(c.algo), c.reason};
  } else {
    const planner::row_stats& a = facts.a_rows();
    const bool empty = a.nnz == 0 || b.nnz == 0;
    planner::row_shape shape{a.rows, a.nnz, a.max_row_length, empty, facts.block_size(),
                             options.semiring.is_plus_times()};
    shape.b_rows = b.rows;
    shape.b_cols = b.cols;
    shape.nnz_b = b.nnz;
    const cuda::device_facts device = cuda::current_device_facts();
    shape.sm_count = device.sm_count;
    shape.a_diagonal_distance = a.diagonal_distance;
    shape.b_bytes = static_cast<std::size_t>(b.nnz) * (sizeof(index_t) + value_bytes);
    shape.cache_bytes = device.l2_bytes;
    const planner::choice c = planner::choose_method(shape);
    r = {&methods().find(c.algo), c.reason};
  }
  const std::string name(to_string(r.method->algo));
  if (mask != nullptr && !r.method->masks) {
    throw_bad_input("algorithm '" + name + "' runs no masked products; they run on: auto, " +
                    methods_that([](const method::method& m) { return m.masks; }));
  }
  if (mask == nullptr && r.method->masked_only) {
    throw_bad_input("algorithm '" + name + "' runs masked products only");
  }
  if (!options.semiring.is_plus_times() && !r.method->semirings) {
    throw_bad_input("algorithm '" + name + "' runs plus_times only; semiring " + to_string(options.semiring) +
                    " runs on: auto, " + methods_that([](const method::method& m) { return m.semirings; }));
  }
  return r;
}

// The numeric phase of a product on a known structure: the own numeric pass
// of the method the job names (automatic: the planner's choice) where it has
// one, else the table's.
const method::numeric_pass& numeric_pass_of(const multiply_options& options, const stored_facts& facts,
                                            const cuda::structure_view& b, std::size_t value_bytes) {
  const method::method& m = *resolve(options, facts, b, value_bytes, nullptr).method;
  return m.numeric.present() ? m.numeric : methods().numeric;
}

}  // namespace

cuda_backend::cuda_backend(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || ordinal < 0 || ordinal >= count) {
    (void)cudaGetLastError();
    throw error(error_kind::device_failure,
                "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(status == cudaSuccess ? count : 0) +
                    " visible" + (status == cudaSuccess ? "" : std::string(": ") + cudaGetErrorString(status)) + ")");
  }
  context_ = std::make_shared<cuda::device_context>(ordinal);
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
  m.cached_bytes = context_->pool.cached_bytes();
  return m;
}

void cuda_backend::reset_peak() { context_->memory.reset_peak(); }

void cuda_backend::release_idle(std::size_t keep_bytes) {
  device_guard guard(context_->device);
  // Frees still queued on streams hold their memory in the pool until they run.
  SPGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  context_->pool.trim_to(keep_bytes);
  cuda::trim_staging(2);  // one copy's
}

const cuda_stored_matrix& cuda_backend::own(const stored_matrix& m, const char* what) const {
  const auto* d = dynamic_cast<const cuda_stored_matrix*>(&m);
  if (d == nullptr || &d->context() != context_.get()) {
    throw_bad_input(std::string(what) + " is not stored on " + name());
  }
  return *d;
}

std::shared_ptr<stored_matrix> cuda_backend::store_checked(
    const matrix_info& info, const std::function<void(const arrays_to_fill&, cudaStream_t)>& fill) {
  if (info.rows < 0 || info.cols < 0 || info.nnz < 0) throw_bad_input("negative matrix size");
  cuda::device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  auto run = [&](auto tag) -> cuda::any_device_csr {
    using T = decltype(tag);
    const auto rows = static_cast<std::size_t>(info.rows), nnz = static_cast<std::size_t>(info.nnz);
    cuda::device_csr<T> d = cuda::allocate_csr<T>(info.rows, info.cols, info.nnz, context_->memory, stream.get());
    fill({d.row_offsets.data(), (rows + 1) * sizeof(offset_t), d.col_indices.data(), nnz * sizeof(index_t),
          d.values.data(), nnz * sizeof(T)},
         stream.get());
    const std::string problem = cuda::find_structure_problem(d.view().structure(), context_->memory, stream.get());
    if (!problem.empty()) throw_bad_input("not valid CSR: " + problem);
    return d;
  };
  cuda::any_device_csr d = info.type == value_type::f32 ? run(float{}) : run(double{});
  return keep(std::move(d), stream.get());
}

std::shared_ptr<stored_matrix> cuda_backend::keep(any_device_csr m, cudaStream_t stream,
                                                  const planner::row_stats* same_pattern) {
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto kept = std::make_shared<cuda_stored_matrix>(context_, std::move(m));
  if (same_pattern != nullptr) kept->adopt_row_stats(*same_pattern);
  return kept;
}

std::shared_ptr<stored_matrix> cuda_backend::store(const any_csr& m) {
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  any_device_csr d = std::visit(
      [&](const auto& host) -> any_device_csr { return cuda::upload(host, context_->memory, stream.get()); }, m);
  return keep(std::move(d), stream.get());
}

any_csr cuda_backend::fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) {
  const cuda_stored_matrix& s = own(m, "matrix to fetch");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  return std::visit(
      [&](const auto& d) -> any_csr { return cuda::download_rows(d, row_begin, row_end, stream.get()); },
      s.matrix());
}

std::vector<offset_t> cuda_backend::sample_row_offsets(const stored_matrix& m, std::int64_t stride) {
  if (stride < 1) throw_bad_input("row offsets sampled every " + std::to_string(stride) + " rows: at least 1");
  const cuda_stored_matrix& s = own(m, "matrix to sample");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const std::int64_t rows = s.info().rows;
  const auto strided = static_cast<std::size_t>((rows + stride - 1) / stride);
  std::vector<offset_t> out(strided + 1);
  std::visit(
      [&](const auto& d) {
        const offset_t* from = d.row_offsets.data();
        // One offset every `stride` rows in one strided copy, then the end.
        if (strided > 0) {
          SPGEMM_CUDA_CHECK(cudaMemcpy2DAsync(out.data(), sizeof(offset_t), from,
                                              static_cast<std::size_t>(stride) * sizeof(offset_t), sizeof(offset_t),
                                              strided, cudaMemcpyDeviceToHost, stream.get()));
        }
        SPGEMM_CUDA_CHECK(cudaMemcpyAsync(&out[strided], from + rows, sizeof(offset_t), cudaMemcpyDeviceToHost,
                                          stream.get()));
      },
      s.matrix());
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return out;
}

void cuda_backend::fetch_to(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink) {
  const cuda_stored_matrix& s = own(m, "matrix to fetch");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  std::visit([&](const auto& d) { cuda::download_rows_to(d, row_begin, row_end, sink, stream.get()); }, s.matrix());
}

void cuda_backend::append_rows(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, any_csr& out) {
  const cuda_stored_matrix& s = own(m, "matrix to fetch");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  std::visit(
      [&](const auto& d, auto& to) {
        using T = typename std::decay_t<decltype(d)>::value;
        using U = typename std::decay_t<decltype(to)>::value;
        if constexpr (!std::is_same_v<T, U>) {
          throw_bad_input("rows to append are of another value type than the matrix they go to");
        } else {
          cuda::append_rows(d, row_begin, row_end, to, stream.get());
        }
      },
      s.matrix(), out);
}

cuda_backend::product cuda_backend::checked(const stored_matrix& a, const stored_matrix& b, const stored_matrix* mask,
                                            const multiply_options& options) const {
  const cuda_stored_matrix& sa = own(a, "left operand");
  const cuda_stored_matrix& sb = own(b, "right operand");
  require_conformable(sa.info(), sb.info());
  require_valid(options.tuning);
  check_semiring(options.semiring);
  const cuda_stored_matrix* sm = mask != nullptr ? &own(*mask, "mask") : nullptr;
  if (sm != nullptr) require_mask_shape(sm->info(), sa.info().rows, sb.info().cols);
  return {sa, sb, sm, output_type_of(sa.info(), sb.info(), options)};
}

memory_estimate cuda_backend::estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                                const multiply_options& options) {
  return estimate(checked(a, b, nullptr, options), nullptr, options);
}

std::shared_ptr<stored_matrix> cuda_backend::multiply(const stored_matrix& a, const stored_matrix& b,
                                                      const multiply_options& options, std::size_t memory_limit,
                                                      const cancel_token& cancel, std::size_t* peak_bytes) {
  return run(checked(a, b, nullptr, options), nullptr, options, memory_limit, cancel, peak_bytes);
}

memory_estimate cuda_backend::estimate_masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                       const stored_matrix& mask, const mask_options& how,
                                                       const multiply_options& options) {
  return estimate(checked(a, b, &mask, options), &how, options);
}

std::shared_ptr<stored_matrix> cuda_backend::masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                             const stored_matrix& mask, const mask_options& how,
                                                             const multiply_options& options,
                                                             std::size_t memory_limit, const cancel_token& cancel,
                                                             std::size_t* peak_bytes) {
  return run(checked(a, b, &mask, options), &how, options, memory_limit, cancel, peak_bytes);
}

namespace {

// What a method reads of a product's mask: M's structure (values come with
// the run, converted to C's type).
method::job_mask job_mask_of(const cuda_stored_matrix* m, const mask_options* how) {
  method::job_mask out;
  if (m != nullptr) {
    out.m = m->structure();
    out.complement = how->complement;
  }
  return out;
}

}  // namespace

memory_estimate cuda_backend::estimate(const product& p, const mask_options* how, const multiply_options& options) {
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const stored_facts facts(p.a, p.b, stream.get());
  const resolved r = resolve(options, facts, p.b.structure(), size_of(p.out), how);
  const cancel_token never;
  const method::job job{p.a.structure(), p.b.structure(), size_of(p.out), options.tuning, facts, methods(),
                        context_->memory, stream.get(), never, options.semiring, job_mask_of(p.mask, how)};
  memory_estimate e = r.method->estimate(job);
  e.algo = r.method->algo;
  if (!r.reason.empty()) e.method = "auto: " + e.method + " (" + r.reason + ")";
  if (!options.semiring.is_plus_times()) e.method += " " + to_string(options.semiring);
  // Operands of another value type are converted first and held for the whole job.
  for (const matrix_info& m : {p.a.info(), p.b.info()}) {
    if (m.type != p.out) e.workspace_bytes += static_cast<std::size_t>(m.nnz) * size_of(p.out);
  }
  if (p.mask != nullptr && !how->structural) e.workspace_bytes += static_cast<std::size_t>(p.mask->info().nnz) * size_of(p.out);
  return e;
}

std::shared_ptr<stored_matrix> cuda_backend::run(const product& p, const mask_options* how,
                                                 const multiply_options& options, std::size_t memory_limit,
                                                 const cancel_token& cancel, std::size_t* peak_bytes) {
  cancel.throw_if_cancelled();
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const stored_facts facts(p.a, p.b, stream.get());
  const resolved r = resolve(options, facts, p.b.structure(), size_of(p.out), how);
  // Everything the job allocates, converted operands included, is counted
  // against its estimate.
  cuda::limiting_resource limit(context_->memory, memory_limit, r.name());
  cuda::statistics_resource held(limit);
  method::job job{p.a.structure(), p.b.structure(), size_of(p.out), options.tuning, facts, methods(),
                  held, stream.get(), cancel, options.semiring, job_mask_of(p.mask, how)};
  auto run = [&](auto tag) -> any_device_csr {
    using T = decltype(tag);
    operand<T> oa = operand_of<T>(p.a.matrix(), held, stream.get());
    operand<T> ob = operand_of<T>(p.b.matrix(), held, stream.get());
    operand<T> om;  // a value mask's values as T
    if (p.mask != nullptr && !how->structural) {
      om = operand_of<T>(p.mask->matrix(), held, stream.get());
      job.mask.values = om.view.values;
    }
    cancel.throw_if_cancelled();
    return r.method->template run<T>(job, oa.view, ob.view);
  };
  any_device_csr c = p.out == value_type::f32 ? run(float{}) : run(double{});
  // C outlives the job's resources: it goes back through the device's.
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, c);
  if (peak_bytes != nullptr) *peak_bytes = held.peak_bytes();
  return keep(std::move(c), stream.get());
}

std::vector<const cuda_stored_matrix*> cuda_backend::op_operands(const matrix_op& op,
                                                                  const std::vector<const stored_matrix*>& operands,
                                                                  matrix_info* result) const {
  std::vector<const cuda_stored_matrix*> stored;
  std::vector<matrix_info> infos;
  for (const stored_matrix* m : operands) {
    stored.push_back(&own(*m, "operand"));
    infos.push_back(stored.back()->info());
  }
  *result = result_bound(op, infos);
  return stored;
}

memory_estimate cuda_backend::estimate_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands) {
  matrix_info c;
  const auto stored = op_operands(op, operands, &c);
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  std::vector<cuda::structure_view> views;
  for (const cuda_stored_matrix* m : stored) views.push_back(m->structure());
  std::int64_t entries = 0;
  if (const auto* rows = std::get_if<extract_rows>(&op)) {
    entries = matrix_ops::extracted_entries(views[0], rows->rows, context_->memory, stream.get());
  }
  memory_estimate e = matrix_ops::estimate(op, views, size_of(c.type), entries);
  // Operands of another value type are converted first and held for the whole op.
  for (const cuda_stored_matrix* m : stored) {
    if (m->info().type != c.type) e.workspace_bytes += static_cast<std::size_t>(m->info().nnz) * size_of(c.type);
  }
  return e;
}

std::shared_ptr<stored_matrix> cuda_backend::run_op(const matrix_op& op,
                                                    const std::vector<const stored_matrix*>& operands,
                                                    std::size_t memory_limit, const cancel_token& cancel,
                                                    std::size_t* peak_bytes) {
  matrix_info c;
  const auto stored = op_operands(op, operands, &c);
  cancel.throw_if_cancelled();
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  cuda::limiting_resource limit(context_->memory, memory_limit, describe(op));
  cuda::statistics_resource held(limit);
  auto run = [&](auto tag) -> any_device_csr {
    using T = decltype(tag);
    std::vector<operand<T>> converted;
    std::vector<csr_view<T>> views;
    for (const cuda_stored_matrix* m : stored) converted.push_back(operand_of<T>(m->matrix(), held, stream.get()));
    for (const operand<T>& o : converted) views.push_back(o.view);
    return matrix_ops::run<T>(op, views, held, stream.get(), cancel);
  };
  any_device_csr result = c.type == value_type::f32 ? run(float{}) : run(double{});
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, result);
  if (peak_bytes != nullptr) *peak_bytes = held.peak_bytes();
  return keep(std::move(result), stream.get());
}

memory_estimate cuda_backend::estimate_transpose(const stored_matrix& a) {
  return transpose::estimate(own(a, "matrix to transpose").info());
}

std::shared_ptr<stored_matrix> cuda_backend::transpose(const stored_matrix& a, const cancel_token& cancel,
                                                       std::size_t* peak_bytes) {
  const cuda_stored_matrix& s = own(a, "matrix to transpose");
  cancel.throw_if_cancelled();
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  cuda::limiting_resource limit(context_->memory, transpose::estimate(s.info()).total(), "transpose");
  cuda::statistics_resource held(limit);
  any_device_csr t = std::visit(
      [&](const auto& d) -> any_device_csr { return transpose::run(d.view(), held, stream.get(), cancel); },
      s.matrix());
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, t);
  if (peak_bytes != nullptr) *peak_bytes = held.peak_bytes();
  return keep(std::move(t), stream.get());
}

const cuda_stored_matrix& cuda_backend::own_structure(const product& p, const stored_matrix& structure) const {
  const cuda_stored_matrix& s = own(structure, "structure");
  const matrix_info i = s.info();
  if (i.rows != p.a.info().rows || i.cols != p.b.info().cols) {
    throw_bad_input("the structure of a " + std::to_string(i.rows) + " x " + std::to_string(i.cols) +
                    " product does not fit a " + std::to_string(p.a.info().rows) + " x " +
                    std::to_string(p.b.info().cols) + " product");
  }
  return s;
}

memory_estimate cuda_backend::estimate_multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                        const stored_matrix& structure,
                                                        const multiply_options& options) {
  if (!options.semiring.is_plus_times()) throw_bad_input("numeric-only products run plus_times only");
  const product p = checked(a, b, nullptr, options);
  const cuda_stored_matrix& s = own_structure(p, structure);
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const stored_facts facts(p.a, p.b, stream.get());
  const cancel_token never;
  const method::job job{p.a.structure(), p.b.structure(), size_of(p.out), options.tuning, facts, methods(),
                        context_->memory, stream.get(), never};
  // The structure's row statistics are measured (once, and kept) here, as
  // the operands' facts are: the run then allocates nothing outside its limit.
  s.row_stats(stream.get());
  memory_estimate e = numeric_pass_of(options, facts, p.b.structure(), size_of(p.out)).estimate(job, s.structure());
  e.output_bytes = cuda::csr_bytes(s.info().rows, s.info().nnz, size_of(p.out));
  for (const matrix_info& m : {p.a.info(), p.b.info()}) {
    if (m.type != p.out) e.workspace_bytes += static_cast<std::size_t>(m.nnz) * size_of(p.out);
  }
  // An operand made after this estimate (a Galerkin product's intermediate)
  // is measured during the run: a few words of scratch at a time.
  e.workspace_bytes += planner::statistics_scratch_bytes;
  return e;
}

std::shared_ptr<stored_matrix> cuda_backend::multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                              const stored_matrix& structure,
                                                              const multiply_options& options, std::size_t memory_limit,
                                                              const cancel_token& cancel, std::size_t* peak_bytes) {
  if (!options.semiring.is_plus_times()) throw_bad_input("numeric-only products run plus_times only");
  const product p = checked(a, b, nullptr, options);
  const cuda_stored_matrix& s = own_structure(p, structure);
  cancel.throw_if_cancelled();
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  const stored_facts facts(p.a, p.b, stream.get());
  cuda::limiting_resource limit(context_->memory, memory_limit, "numeric");
  cuda::statistics_resource held(limit);
  const method::job job{p.a.structure(), p.b.structure(), size_of(p.out), options.tuning, facts, methods(),
                        held, stream.get(), cancel};
  const std::int64_t longest = s.row_stats(stream.get()).max_row_length;
  const method::numeric_pass& numeric = numeric_pass_of(options, facts, p.b.structure(), size_of(p.out));
  auto run = [&](auto tag) -> any_device_csr {
    using T = decltype(tag);
    operand<T> oa = operand_of<T>(p.a.matrix(), held, stream.get());
    operand<T> ob = operand_of<T>(p.b.matrix(), held, stream.get());
    cuda::device_csr<T> c = cuda::allocate_csr<T>(s.info().rows, s.info().cols, s.info().nnz, held, stream.get());
    cancel.throw_if_cancelled();
    numeric.run<T>(job, oa.view, ob.view, s.structure(), longest, c);
    return c;
  };
  any_device_csr c = p.out == value_type::f32 ? run(float{}) : run(double{});
  std::visit([&](auto& m) { m.bind_resource(context_->memory); }, c);
  if (peak_bytes != nullptr) *peak_bytes = held.peak_bytes();
  return keep(std::move(c), stream.get(), &s.row_stats(stream.get()));
}

void cuda_backend::write_values(stored_matrix& m, const void* values) {
  const cuda_stored_matrix& d = own(m, "matrix to write");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  std::visit(
      [&](const auto& held) {
        SPGEMM_CUDA_CHECK(cudaMemcpyAsync(held.values.data(), values, held.values.bytes(), cudaMemcpyHostToDevice,
                                          stream.get()));
      },
      d.matrix());
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

std::shared_ptr<stored_matrix> cuda_backend::with_values(const stored_matrix& m, const void* values) {
  const cuda_stored_matrix& d = own(m, "matrix to copy");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  any_device_csr copy = std::visit(
      [&](const auto& held) -> any_device_csr {
        using T = typename std::decay_t<decltype(held)>::value;
        cuda::device_csr<T> c = cuda::allocate_csr<T>(held.rows, held.cols, held.nnz, context_->memory, stream.get());
        SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.row_offsets.data(), held.row_offsets.data(), held.row_offsets.bytes(),
                                          cudaMemcpyDeviceToDevice, stream.get()));
        SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.col_indices.data(), held.col_indices.data(), held.col_indices.bytes(),
                                          cudaMemcpyDeviceToDevice, stream.get()));
        SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.values.data(), values, c.values.bytes(), cudaMemcpyHostToDevice,
                                          stream.get()));
        return c;
      },
      d.matrix());
  return keep(std::move(copy), stream.get(), &d.row_stats(stream.get()));
}

std::shared_ptr<stored_matrix> cuda_backend::copy_rows(const stored_matrix& m, std::int64_t row_begin,
                                                       std::int64_t row_end) {
  const auto* src = dynamic_cast<const cuda_stored_matrix*>(&m);
  if (src == nullptr) throw_bad_input("matrix to copy to " + name() + " is not stored on a GPU");
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  any_device_csr copy = std::visit(
      [&](const auto& d) -> any_device_csr {
        return cuda::copy_rows(d, src->context().device, row_begin, row_end, context_->memory, stream.get());
      },
      src->matrix());
  return keep(std::move(copy), stream.get());
}

row_work cuda_backend::work_per_row(const stored_matrix& a, const stored_matrix& b) {
  const cuda_stored_matrix& sa = own(a, "left operand");
  const cuda_stored_matrix& sb = own(b, "right operand");
  require_conformable(sa.info(), sb.info());
  device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  return planner::compute_row_work(sa.structure(), sb.structure(), context_->memory, stream.get());
}

}  // namespace gpu

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::shared_ptr<backend> make_cuda_backend(int ordinal) { return std::make_shared<gpu::cuda_backend>(ordinal); }

std::vector<std::shared_ptr<backend>> open_cuda_backends(const std::vector<int>& ordinals) {
  std::vector<std::shared_ptr<backend>> backends;
  for (int ordinal : ordinals) backends.push_back(make_cuda_backend(ordinal));
  // Each device may read every other's memory: copies between them go over
  // NVLink or PCIe directly instead of through host memory.
  for (int from : ordinals) {
    for (int to : ordinals) {
      int can = 0;
      if (from == to || cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || can == 0) {
        (void)cudaGetLastError();
        continue;
      }
      cuda::device_guard guard(from);
      const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
      if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) SPGEMM_CUDA_CHECK(enabled);
      (void)cudaGetLastError();
    }
  }
  return backends;
}

}  // namespace spgemm
