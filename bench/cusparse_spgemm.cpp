// cuSPARSE SpGEMM baseline (see cusparse_spgemm.hpp).
//
// One call, as timed: create C's descriptor, work estimation (size query,
// then with its buffer), for ALG2/ALG3 the memory estimation (its temporary
// buffer freed at once), compute (ALG1: size query, then with its buffer),
// nnz(C), allocation of C's arrays, copy, release of the workspace. All device
// memory of the call comes from the default memory pool through
// cudaMallocAsync on the bench's stream, and is counted here.
#include "cusparse_spgemm.hpp"
#include "warmup.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace bench {
namespace {

// A failed step of one call: its text becomes the row's status.
struct step_failure {
  std::string status;
};

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear a non-sticky error so later runs may go on
    throw step_failure{"failed: " + std::string(cudaGetErrorName(e)) + " in " + what};
  }
}

void check_sparse(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    throw step_failure{"failed: " + std::string(cusparseGetErrorName(s)) + " in " + what};
  }
}

// Setup errors (outside any run) end the program's use of cuSPARSE.
void require_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cuda_text(e));
}

cudaDataType data_type(spgemm::value_type t) {
  return t == spgemm::value_type::f32 ? CUDA_R_32F : CUDA_R_64F;
}

cusparseSpGEMMAlg_t to_alg(int alg) {
  switch (alg) {
    case 1: return CUSPARSE_SPGEMM_ALG1;
    case 2: return CUSPARSE_SPGEMM_ALG2;
    case 3: return CUSPARSE_SPGEMM_ALG3;
    default: throw std::invalid_argument("cuSPARSE SpGEMM algorithm must be 1, 2 or 3");
  }
}

// ALG3 splits the product into chunks; cuSPARSE's documentation and samples
// use 0.2 of the intermediate products per chunk.
constexpr float alg3_chunk_fraction = 0.2f;

// Device arrays of one operand with 32-bit offsets (plain cudaMalloc: the
// operands live outside the timed region).
struct device_csr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  void* offsets = nullptr;
  void* columns = nullptr;
  void* values = nullptr;
  cusparseConstSpMatDescr_t descr = nullptr;

  void release() {
    if (descr) cusparseDestroySpMat(descr);
    if (offsets) cudaFree(offsets);
    if (columns) cudaFree(columns);
    if (values) cudaFree(values);
    *this = device_csr{};
  }
};

}  // namespace

struct cusparse_bench::impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cusparseHandle_t handle = nullptr;
  cudaMemPool_t pool = nullptr;

  device_csr a, b;
  bool b_is_a = false;
  spgemm::value_type type = spgemm::value_type::f64;
  std::string operand_problem = "failed: no operands";

  // Pool allocations of the current call, and their bytes.
  std::unordered_map<void*, std::size_t> live;
  std::size_t in_use = 0;
  std::size_t peak = 0;
  std::int64_t last_nnz_c = -1;

  void* allocate(std::size_t bytes, const char* what) {
    void* p = nullptr;
    const std::size_t ask = std::max<std::size_t>(bytes, 1);
    cudaError_t e = cudaMallocAsync(&p, ask, pool, stream);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      if (e == cudaErrorMemoryAllocation)
        throw step_failure{"failed: out of memory (" + std::to_string(bytes) + " bytes for " + what + ")"};
      check_cuda(e, what);
    }
    live.emplace(p, ask);
    in_use += ask;
    peak = std::max(peak, in_use);
    return p;
  }

  void release(void*& p) {
    if (!p) return;
    auto it = live.find(p);
    if (it != live.end()) {
      in_use -= it->second;
      live.erase(it);
    }
    cudaFreeAsync(p, stream);
    p = nullptr;
  }

  void release_all() {
    for (auto& [p, bytes] : live) cudaFreeAsync(p, stream);
    live.clear();
    in_use = 0;
    cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
  }

  void upload(const spgemm::any_csr& m, device_csr& d) {
    std::visit(
        [&](const auto& csr) {
          using T = typename std::decay_t<decltype(csr)>::value;
          d.rows = csr.rows;
          d.cols = csr.cols;
          d.nnz = csr.nnz();
          std::vector<std::int32_t> offsets(csr.row_offsets.begin(), csr.row_offsets.end());
          const std::size_t nz = static_cast<std::size_t>(std::max<std::int64_t>(d.nnz, 1));
          check_cuda(cudaMalloc(&d.offsets, offsets.size() * sizeof(std::int32_t)), "upload");
          check_cuda(cudaMalloc(&d.columns, nz * sizeof(std::int32_t)), "upload");
          check_cuda(cudaMalloc(&d.values, nz * sizeof(T)), "upload");
          // On the bench's own stream, then synchronised: the stream does not
          // wait for the legacy default stream, and a pageable cudaMemcpy may
          // return before its DMA has landed.
          check_cuda(cudaMemcpyAsync(d.offsets, offsets.data(), offsets.size() * sizeof(std::int32_t),
                                     cudaMemcpyHostToDevice, stream),
                     "upload");
          if (d.nnz > 0) {
            check_cuda(cudaMemcpyAsync(d.columns, csr.col_indices.data(),
                                       csr.col_indices.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream),
                       "upload");
            check_cuda(cudaMemcpyAsync(d.values, csr.values.data(), csr.values.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream),
                       "upload");
          }
          check_cuda(cudaStreamSynchronize(stream), "upload");
          check_sparse(cusparseCreateConstCsr(&d.descr, d.rows, d.cols, d.nnz, d.offsets, d.columns, d.values,
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                              data_type(spgemm::value_type_of<T>())),
                       "creating an operand's descriptor");
        },
        m);
  }

  // Everything one call holds; released on every way out.
  struct call_state {
    impl& owner;
    cusparseSpGEMMDescr_t spgemm = nullptr;
    cusparseSpMatDescr_t c = nullptr;
    void* c_offsets = nullptr;
    void* c_columns = nullptr;
    void* c_values = nullptr;
    void* buffer1 = nullptr;
    void* buffer2 = nullptr;
    void* buffer3 = nullptr;
    std::int64_t nnz_c = 0;

    explicit call_state(impl& o) : owner(o) {}
    call_state(const call_state&) = delete;
    call_state& operator=(const call_state&) = delete;
    ~call_state() {
      if (c) cusparseDestroySpMat(c);
      if (spgemm) cusparseSpGEMM_destroyDescr(spgemm);
      owner.release_all();
    }
  };

  // One product; returns its milliseconds. With `out`, C is downloaded.
  double call(int alg_number, std::optional<spgemm::any_csr>* out) {
    const cusparseSpGEMMAlg_t alg = to_alg(alg_number);
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cudaDataType dt = data_type(type);
    const double one64 = 1.0, zero64 = 0.0;
    const float one32 = 1.0f, zero32 = 0.0f;
    const void* alpha = type == spgemm::value_type::f32 ? static_cast<const void*>(&one32) : &one64;
    const void* beta = type == spgemm::value_type::f32 ? static_cast<const void*>(&zero32) : &zero64;
    const device_csr& mb = b_is_a ? a : b;
    const std::size_t value_bytes = spgemm::size_of(type);

    call_state s(*this);
    check_cuda(cudaStreamSynchronize(stream), "synchronize before the call");
    const auto start = std::chrono::steady_clock::now();

    check_sparse(cusparseSpGEMM_createDescr(&s.spgemm), "createDescr");
    s.c_offsets = allocate(static_cast<std::size_t>(a.rows + 1) * sizeof(std::int32_t), "C row offsets");
    check_sparse(cusparseCreateCsr(&s.c, a.rows, mb.cols, 0, s.c_offsets, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt),
                 "creating C's descriptor");

    std::size_t size1 = 0;
    check_sparse(cusparseSpGEMM_workEstimation(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg, s.spgemm,
                                               &size1, nullptr),
                 "workEstimation (size)");
    s.buffer1 = allocate(size1, "buffer 1");
    check_sparse(cusparseSpGEMM_workEstimation(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg, s.spgemm,
                                               &size1, s.buffer1),
                 "workEstimation");

    std::size_t size2 = 0;
    if (alg == CUSPARSE_SPGEMM_ALG1) {
      check_sparse(cusparseSpGEMM_compute(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg, s.spgemm,
                                          &size2, nullptr),
                   "compute (size)");
    } else {
      std::int64_t products = 0;
      check_sparse(cusparseSpGEMM_getNumProducts(s.spgemm, &products), "getNumProducts");
      const float chunk = alg == CUSPARSE_SPGEMM_ALG3 ? alg3_chunk_fraction : 1.0f;
      std::size_t size3 = 0;
      check_sparse(cusparseSpGEMM_estimateMemory(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg,
                                                 s.spgemm, chunk, &size3, nullptr, nullptr),
                   "estimateMemory (size)");
      s.buffer3 = allocate(size3, "buffer 3");
      check_sparse(cusparseSpGEMM_estimateMemory(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg,
                                                 s.spgemm, chunk, &size3, s.buffer3, &size2),
                   "estimateMemory");
      release(s.buffer3);
    }
    s.buffer2 = allocate(size2, "buffer 2");
    check_sparse(cusparseSpGEMM_compute(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg, s.spgemm,
                                        &size2, s.buffer2),
                 "compute");

    std::int64_t c_rows = 0, c_cols = 0;
    check_sparse(cusparseSpMatGetSize(s.c, &c_rows, &c_cols, &s.nnz_c), "SpMatGetSize");
    if (s.nnz_c < 0 || s.nnz_c > INT32_MAX) throw step_failure{"failed: nnz(C) exceeds 32-bit"};
    last_nnz_c = s.nnz_c;
    s.c_columns = allocate(static_cast<std::size_t>(s.nnz_c) * sizeof(std::int32_t), "C columns");
    s.c_values = allocate(static_cast<std::size_t>(s.nnz_c) * value_bytes, "C values");
    check_sparse(cusparseCsrSetPointers(s.c, s.c_offsets, s.c_columns, s.c_values), "CsrSetPointers");
    check_sparse(cusparseSpGEMM_copy(handle, op, op, alpha, a.descr, mb.descr, beta, s.c, dt, alg, s.spgemm), "copy");
    release(s.buffer1);
    release(s.buffer2);
    check_cuda(cudaStreamSynchronize(stream), "synchronize after copy");
    const auto stop = std::chrono::steady_clock::now();

    if (out) *out = download(s, c_rows, c_cols);
    return std::chrono::duration<double, std::milli>(stop - start).count();
  }

  // One transpose by cusparseCsr2cscEx2; returns its milliseconds. With
  // `out`, A^T is downloaded (as CSR).
  double call_transpose(std::optional<spgemm::any_csr>* out) {
    call_state s(*this);
    check_cuda(cudaStreamSynchronize(stream), "synchronize before the call");
    const auto start = std::chrono::steady_clock::now();
    const std::size_t value_bytes = spgemm::size_of(type);
    const std::size_t nz = static_cast<std::size_t>(std::max<std::int64_t>(a.nnz, 1));
    s.c_offsets = allocate(static_cast<std::size_t>(a.cols + 1) * sizeof(std::int32_t), "A^T offsets");
    s.c_columns = allocate(nz * sizeof(std::int32_t), "A^T columns");
    s.c_values = allocate(nz * value_bytes, "A^T values");
    std::size_t size = 0;
    check_sparse(cusparseCsr2cscEx2_bufferSize(handle, static_cast<int>(a.rows), static_cast<int>(a.cols),
                                               static_cast<int>(a.nnz), a.values, static_cast<const int*>(a.offsets),
                                               static_cast<const int*>(a.columns), s.c_values,
                                               static_cast<int*>(s.c_offsets), static_cast<int*>(s.c_columns),
                                               data_type(type), CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                               CUSPARSE_CSR2CSC_ALG1, &size),
                 "Csr2cscEx2_bufferSize");
    s.buffer1 = allocate(size, "csr2csc buffer");
    check_sparse(cusparseCsr2cscEx2(handle, static_cast<int>(a.rows), static_cast<int>(a.cols),
                                    static_cast<int>(a.nnz), a.values, static_cast<const int*>(a.offsets),
                                    static_cast<const int*>(a.columns), s.c_values, static_cast<int*>(s.c_offsets),
                                    static_cast<int*>(s.c_columns), data_type(type), CUSPARSE_ACTION_NUMERIC,
                                    CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, s.buffer1),
                 "Csr2cscEx2");
    release(s.buffer1);
    check_cuda(cudaStreamSynchronize(stream), "synchronize after csr2csc");
    const auto stop = std::chrono::steady_clock::now();
    s.nnz_c = a.nnz;
    last_nnz_c = a.nnz;
    if (out) *out = download(s, a.cols, a.rows);
    return std::chrono::duration<double, std::milli>(stop - start).count();
  }

  spgemm::any_csr download(const call_state& s, std::int64_t rows, std::int64_t cols) {
    if (type == spgemm::value_type::f32) return download_as<float>(s, rows, cols);
    return download_as<double>(s, rows, cols);
  }

  template <typename T>
  spgemm::csr_matrix<T> download_as(const call_state& s, std::int64_t rows, std::int64_t cols) {
    spgemm::csr_matrix<T> m;
    m.rows = rows;
    m.cols = cols;
    const auto nnz = static_cast<std::size_t>(s.nnz_c);
    std::vector<std::int32_t> offsets(static_cast<std::size_t>(rows) + 1);
    m.col_indices.resize(nnz);
    m.values.resize(nnz);
    check_cuda(cudaMemcpyAsync(offsets.data(), s.c_offsets, offsets.size() * sizeof(std::int32_t),
                               cudaMemcpyDeviceToHost, stream),
               "download");
    if (nnz > 0) {
      check_cuda(cudaMemcpyAsync(m.col_indices.data(), s.c_columns, nnz * sizeof(std::int32_t),
                                 cudaMemcpyDeviceToHost, stream),
                 "download");
      check_cuda(cudaMemcpyAsync(m.values.data(), s.c_values, nnz * sizeof(T), cudaMemcpyDeviceToHost, stream),
                 "download");
    }
    check_cuda(cudaStreamSynchronize(stream), "download");
    m.row_offsets.assign(offsets.begin(), offsets.end());
    // Columns should come sorted; sort any row that does not, so that the
    // comparison judges the product, not the order of its entries.
    std::vector<std::pair<std::int32_t, T>> row;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto begin = static_cast<std::size_t>(m.row_offsets[r]);
      const auto end = static_cast<std::size_t>(m.row_offsets[r + 1]);
      if (end <= begin || end > nnz) continue;
      if (std::is_sorted(m.col_indices.begin() + begin, m.col_indices.begin() + end)) continue;
      row.clear();
      for (std::size_t k = begin; k < end; ++k) row.emplace_back(m.col_indices[k], m.values[k]);
      std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t k = begin; k < end; ++k) {
        m.col_indices[k] = row[k - begin].first;
        m.values[k] = row[k - begin].second;
      }
    }
    return m;
  }
};

cusparse_bench::cusparse_bench(int device) : impl_(std::make_unique<impl>()) {
  impl_->device = device;
  require_cuda(cudaSetDevice(device), "cudaSetDevice");
  require_cuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  require_cuda(cudaDeviceGetDefaultMemPool(&impl_->pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t threshold = UINT64_MAX;  // cuuint64_t, as the attribute expects
  require_cuda(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrReleaseThreshold, &threshold),
               "cudaMemPoolSetAttribute");
  const cusparseStatus_t s = cusparseCreate(&impl_->handle);
  if (s != CUSPARSE_STATUS_SUCCESS) throw std::runtime_error(std::string("cusparseCreate: ") + cusparseGetErrorName(s));
  const cusparseStatus_t t = cusparseSetStream(impl_->handle, impl_->stream);
  if (t != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cusparseSetStream: ") + cusparseGetErrorName(t));
}

cusparse_bench::~cusparse_bench() {
  clear_operands();
  if (impl_->handle) cusparseDestroy(impl_->handle);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

gpu_description cusparse_bench::describe() const {
  gpu_description d = describe_gpu(impl_->device).value_or(gpu_description{});
  int version = 0;
  if (cusparseGetVersion(impl_->handle, &version) == CUSPARSE_STATUS_SUCCESS) d.cusparse_version = version;
  return d;
}

std::string cusparse_bench::set_operands(const spgemm::any_csr& a, const spgemm::any_csr& b,
                                         std::int64_t nnz_c_bound) {
  clear_operands();
  const spgemm::matrix_info ia = spgemm::info_of(a), ib = spgemm::info_of(b);
  impl_->type = ia.type;
  impl_->b_is_a = &a == &b;
  if (ia.type != ib.type) {
    impl_->operand_problem = "failed: operands of different value types";
  } else if (ia.nnz > INT32_MAX || ib.nnz > INT32_MAX || nnz_c_bound > INT32_MAX || ia.rows >= INT32_MAX ||
             ia.cols >= INT32_MAX || ib.cols >= INT32_MAX) {
    impl_->operand_problem = "skipped: nnz exceeds 32-bit";
  } else {
    try {
      require_cuda(cudaSetDevice(impl_->device), "cudaSetDevice");
      impl_->upload(a, impl_->a);
      if (!impl_->b_is_a) impl_->upload(b, impl_->b);
      impl_->operand_problem.clear();
    } catch (const step_failure& f) {
      impl_->a.release();
      impl_->b.release();
      impl_->operand_problem = f.status + " (operands)";
    }
  }
  return impl_->operand_problem;
}

void cusparse_bench::clear_operands() {
  cudaSetDevice(impl_->device);
  cudaDeviceSynchronize();
  impl_->a.release();
  impl_->b.release();
  impl_->operand_problem = "failed: no operands";
  if (impl_->pool) cudaMemPoolTrimTo(impl_->pool, 0);
  (void)cudaGetLastError();
}

cusparse_run cusparse_bench::run(int alg, int warmups, int repeats, bool download) {
  cusparse_run r;
  if (!impl_->operand_problem.empty()) {
    r.status = impl_->operand_problem;
    return r;
  }
  cudaSetDevice(impl_->device);
  impl_->peak = 0;
  impl_->in_use = 0;
  impl_->last_nnz_c = -1;
  warmup warm(warmups);
  for (int i = 0; static_cast<int>(r.ms.size()) < repeats; ++i) {
    try {
      const bool warming = warm.is_warmup(i);
      std::optional<spgemm::any_csr>* out = (download && i == 0) ? &r.result : nullptr;
      const double ms = impl_->call(alg, out);
      if (!warming) r.ms.push_back(ms);
      if (r.nnz_c < 0 && out && r.result) r.nnz_c = spgemm::info_of(*r.result).nnz;
    } catch (const step_failure& f) {
      r.status = f.status;
      r.ms.clear();
      r.result.reset();
      break;
    }
  }
  r.peak_bytes = impl_->peak;
  if (r.status == "ok" && r.nnz_c < 0) r.nnz_c = impl_->last_nnz_c;
  // Give the pool's memory back so that the next method starts from the same device.
  cudaStreamSynchronize(impl_->stream);
  cudaMemPoolTrimTo(impl_->pool, 0);
  (void)cudaGetLastError();
  return r;
}

cusparse_run cusparse_bench::transpose(int warmups, int repeats, bool download) {
  cusparse_run r;
  if (!impl_->operand_problem.empty()) {
    r.status = impl_->operand_problem;
    return r;
  }
  cudaSetDevice(impl_->device);
  impl_->peak = 0;
  impl_->in_use = 0;
  impl_->last_nnz_c = -1;
  warmup warm(warmups);
  for (int i = 0; static_cast<int>(r.ms.size()) < repeats; ++i) {
    try {
      const bool warming = warm.is_warmup(i);
      std::optional<spgemm::any_csr>* out = (download && i == 0) ? &r.result : nullptr;
      const double ms = impl_->call_transpose(out);
      if (!warming) r.ms.push_back(ms);
    } catch (const step_failure& f) {
      r.status = f.status;
      r.ms.clear();
      r.result.reset();
      break;
    }
  }
  r.peak_bytes = impl_->peak;
  if (r.status == "ok") r.nnz_c = impl_->last_nnz_c;
  cudaStreamSynchronize(impl_->stream);
  cudaMemPoolTrimTo(impl_->pool, 0);
  (void)cudaGetLastError();
  return r;
}

std::optional<gpu_description> describe_gpu(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  gpu_description d;
  d.name = prop.name;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  (void)cudaGetLastError();
  return d;
}

int cuda_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace bench
