// The vendor baseline of spgemm-bench: cuSPARSE's generic SpGEMM (ALG1, ALG2,
// ALG3) on 32-bit CSR, timed the way a user pays for it. Built only where
// SPGEMM_WITH_CUDA is on; this header needs no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spgemm/csr.hpp"

namespace bench {

// What the program reports about the GPU it measured on.
struct gpu_description {
  std::string name;           // e.g. "NVIDIA H100 80GB HBM3"
  int driver_version = 0;     // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;    // cudaRuntimeGetVersion
  int cusparse_version = 0;   // cusparseGetVersion, e.g. 12603
};

struct cusparse_run {
  std::string status = "ok";      // "ok", "skipped: ...", "failed: ..."
  std::vector<double> ms;         // the timed runs, in order
  std::size_t peak_bytes = 0;     // buffers + C at their most, as allocated here
  std::int64_t nnz_c = -1;        // -1 where no run succeeded
  std::optional<spgemm::any_csr> result;  // C downloaded, when asked for
};

// One CUDA device, one cuSPARSE handle and one stream; buffers and C come
// from the device's default memory pool (release threshold raised so that
// repeated runs do not return to cudaMalloc).
class cusparse_bench {
 public:
  // Throws std::runtime_error where the device or cuSPARSE cannot be set up.
  explicit cusparse_bench(int device);
  ~cusparse_bench();
  cusparse_bench(const cusparse_bench&) = delete;
  cusparse_bench& operator=(const cusparse_bench&) = delete;

  gpu_description describe() const;

  // Copies A and B to the device with 32-bit offsets (B may be the same
  // object as A: then it is stored once). `nnz_c_bound` bounds nnz(C).
  // Returns "" or the reason no product can run ("skipped: nnz exceeds
  // 32-bit", "failed: ..."); that reason is then every run's status.
  std::string set_operands(const spgemm::any_csr& a, const spgemm::any_csr& b,
                           std::int64_t nnz_c_bound);
  // Frees the operands and trims the pool (so that other allocators on the
  // device get the memory back).
  void clear_operands();

  // `alg` is 1, 2 or 3. `warmups` untimed calls, then `repeats` timed ones.
  // With `download`, C of the first call is copied back into `result`.
  cusparse_run run(int alg, int warmups, int repeats, bool download);

  // The transpose of A (set_operands(a, a, 0)) by cusparseCsr2cscEx2 (ALG1,
  // values too): CSC of A = CSR of A^T. `result` holds A^T as CSR.
  cusparse_run transpose(int warmups, int repeats, bool download);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// The GPU's description without setting up cuSPARSE; nullopt where no
// device can be queried.
std::optional<gpu_description> describe_gpu(int device);

// CUDA devices the runtime sees (0 where no driver or device is there).
int cuda_devices();

}  // namespace bench
