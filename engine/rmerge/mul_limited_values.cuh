// MulLimited value pass (Gremse et al. 2015, section 2.2, Listing 1; Becker
// et al. 2016, section 2.3): fills C = G * B at the offsets of the structure
// pass. Included once per value type by mul_limited_f32.cu / _f64.cu.
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "rmerge/mul_limited.hpp"
#include "rmerge/rmerge_kernels.cuh"
#include "spgemm/errors.hpp"

namespace spgemm::rmerge {
namespace detail {

// The value pass's arguments besides the left factor.
template <typename T>
struct value_args {
  const offset_t* b_off;
  const index_t* b_col;
  const T* b_val;
  // The kernel takes c_off non-const (the structure pass writes it); the value pass only reads it.
  offset_t* c_off;
  index_t* c_col;
  T* c_val;
  int stage_capacity;
  int b_stage_capacity;
};

template <int W, int R, typename T>
void launch_values(const left_factor<T>& left, const value_args<T>& v, cudaStream_t stream) {
  const unsigned blocks = mul_limited_blocks(left.rows, W);
  std::size_t shared = static_cast<std::size_t>(warps_per_block) * v.stage_capacity * (sizeof(T) + sizeof(index_t));
  if (v.b_stage_capacity > 0) shared = (shared + 15) / 16 * 16 + warps_per_block * b_stage_bytes<T>(v.b_stage_capacity, true);
  if (left.is_explicit()) {
    // c_col null: a numeric-only pass on a known structure's offsets.
    const auto kernel =
        v.c_col == nullptr ? mul_limited_kernel<W, R, true, false, T, true> : mul_limited_kernel<W, R, true, false, T>;
    if (shared > 0) cuda::allow_max_dynamic_shared(kernel);
    kernel<<<blocks, block_threads, shared, stream>>>(left.rows, left.offsets, left.columns, left.values, v.b_off,
                                                      v.b_col, v.b_val, v.c_off, v.c_col, v.c_val, v.stage_capacity,
                                                      v.b_stage_capacity, known_repeats{});
  } else {
    // c_col null: the last pass of a split plan, numeric only; its rows per
    // thread are the split's (4 but where tuning sets them).
    auto kernel = mul_limited_kernel<W, R, false, false, T>;
    if (v.c_col == nullptr) {
      if constexpr (R == default_split_rows_per_thread) {
        kernel = mul_limited_kernel<W, R, false, false, T, true>;
      } else {
        throw_bad_input("rmerge: a numeric-only last pass takes " + std::to_string(default_split_rows_per_thread) +
                        " rows per thread");
      }
    }
    if (shared > 0) cuda::allow_max_dynamic_shared(kernel);
    kernel<<<blocks, block_threads, shared, stream>>>(left.rows, left.offsets, nullptr, nullptr, v.b_off, v.b_col,
                                                      v.b_val, v.c_off, v.c_col, v.c_val, v.stage_capacity,
                                                      v.b_stage_capacity, known_repeats{});
  }
  SPGEMM_CUDA_CHECK_LAUNCH();
}

template <int W, typename T>
void launch_values_r(int r, const left_factor<T>& left, const value_args<T>& v, cudaStream_t stream) {
  switch (r) {
    case 1: return launch_values<W, 1, T>(left, v, stream);
    case 2: return launch_values<W, 2, T>(left, v, stream);
    case 4: return launch_values<W, 4, T>(left, v, stream);
    default: throw_bad_input("rmerge rows per thread " + std::to_string(r) + " is not supported");
  }
}

}  // namespace detail

template <typename T>
void launch_mul_limited_values(pass_config pass, const left_factor<T>& left, const offset_t* b_off,
                               const index_t* b_col, const T* b_val, const offset_t* c_off, index_t* c_col,
                               T* c_val, cudaStream_t stream, int stage_capacity, int b_stage_capacity) {
  if (left.rows == 0) return;
  const detail::value_args<T> v{b_off,  b_col,         b_val, const_cast<offset_t*>(c_off), c_col, c_val,
                                stage_capacity, b_stage_capacity};
  const int r = pass.rows_per_thread;
  switch (pass.subwarp) {
    case 2: return detail::launch_values_r<2, T>(r, left, v, stream);
    case 4: return detail::launch_values_r<4, T>(r, left, v, stream);
    case 8: return detail::launch_values_r<8, T>(r, left, v, stream);
    case 16: return detail::launch_values_r<16, T>(r, left, v, stream);
    case 32: return detail::launch_values_r<32, T>(r, left, v, stream);
    default: throw_bad_input("rmerge sub-warp size " + std::to_string(pass.subwarp) + " is not supported");
  }
}

}  // namespace spgemm::rmerge
