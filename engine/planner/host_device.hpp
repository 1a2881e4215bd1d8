// SPGEMM_HOST_DEVICE marks the planner's rules that host code and kernels
// apply alike (the kernels per row, the host and its tests per job).
#pragma once

#if defined(__CUDACC__)
#define SPGEMM_HOST_DEVICE __host__ __device__
#else
#define SPGEMM_HOST_DEVICE
#endif
