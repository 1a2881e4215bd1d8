// Kernels launched to start while the stream's kernel before them finishes
// (programmatic dependent launch, Hopper on): the launch and the blocks'
// start overlap the previous grid's tail instead of following its end. A
// kernel so launched calls wait_for_previous_grid() before it reads anything
// the grid before it wrote (it returns once that grid completed and its
// writes are visible), and may call release_next_grid() as soon as it starts,
// letting the launch after it begin. On devices without it (and for kernels
// launched the ordinary way) both are no-ops and the launch is ordinary.
#pragma once

#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"

namespace spgemm::cuda {

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void release_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches `kernel` on `grid` blocks of `block` threads on `stream`, to start
// while the stream's previous kernel finishes where the device can.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  config.attrs = &early;
  config.numAttrs = current_device_facts().dependent_launch ? 1 : 0;
  SPGEMM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

}  // namespace spgemm::cuda
