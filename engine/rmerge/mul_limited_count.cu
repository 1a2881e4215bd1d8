// MulLimited structure pass (Gremse et al. 2015, section 2.2, first kernel):
// the row lengths of C = G * B for every (W, R) and explicit/implicit G. See
// rmerge_kernels.cuh for the method; no workspace, O(merged entries) work.
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "rmerge/mul_limited.hpp"
#include "rmerge/rmerge_kernels.cuh"
#include "spgemm/errors.hpp"

namespace spgemm::rmerge {
namespace {

template <int W, int R>
void launch_count(std::int64_t rows, const offset_t* left_off, const index_t* left_col, const offset_t* b_off,
                  const index_t* b_col, offset_t* c_lengths, cudaStream_t stream, int b_stage, known_repeats repeats) {
  const unsigned blocks = mul_limited_blocks(rows, W);
  const std::size_t shared = b_stage > 0 ? warps_per_block * b_stage_bytes<float>(b_stage, false) : 0;
  if (left_col != nullptr) {
    const auto kernel = repeats.left != nullptr ? mul_limited_kernel<W, R, true, true, float, false, true>
                                                : mul_limited_kernel<W, R, true, true, float>;
    if (shared > 0) cuda::allow_max_dynamic_shared(kernel);
    kernel<<<blocks, block_threads, shared, stream>>>(rows, left_off, left_col, nullptr, b_off, b_col, nullptr,
                                                      c_lengths, nullptr, nullptr, 0, b_stage, repeats);
  } else {
    const auto kernel = mul_limited_kernel<W, R, false, true, float>;
    if (shared > 0) cuda::allow_max_dynamic_shared(kernel);
    kernel<<<blocks, block_threads, shared, stream>>>(rows, left_off, nullptr, nullptr, b_off, b_col, nullptr,
                                                      c_lengths, nullptr, nullptr, 0, b_stage, known_repeats{});
  }
  SPGEMM_CUDA_CHECK_LAUNCH();
}

template <int W>
void launch_count_r(int r, std::int64_t rows, const offset_t* left_off, const index_t* left_col,
                    const offset_t* b_off, const index_t* b_col, offset_t* c_lengths, cudaStream_t stream,
                    int b_stage, known_repeats repeats) {
  switch (r) {
    case 1: return launch_count<W, 1>(rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 2: return launch_count<W, 2>(rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 4: return launch_count<W, 4>(rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    default: throw_bad_input("rmerge rows per thread " + std::to_string(r) + " is not supported");
  }
}

}  // namespace

void launch_mul_limited_count(pass_config pass, std::int64_t rows, const offset_t* left_off,
                              const index_t* left_col, const offset_t* b_off, const index_t* b_col,
                              offset_t* c_lengths, cudaStream_t stream, int b_stage_capacity,
                              known_repeats repeats) {
  if (rows == 0) return;
  const int r = pass.rows_per_thread;
  const int b_stage = b_stage_capacity;
  switch (pass.subwarp) {
    case 2: return launch_count_r<2>(r, rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 4: return launch_count_r<4>(r, rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 8: return launch_count_r<8>(r, rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 16: return launch_count_r<16>(r, rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    case 32: return launch_count_r<32>(r, rows, left_off, left_col, b_off, b_col, c_lengths, stream, b_stage, repeats);
    default: throw_bad_input("rmerge sub-warp size " + std::to_string(pass.subwarp) + " is not supported");
  }
}

}  // namespace spgemm::rmerge
