// MulLimited value pass, single precision. Method: rmerge_kernels.cuh.
#include "rmerge/mul_limited_values.cuh"

namespace spgemm::rmerge {
template void launch_mul_limited_values<float>(pass_config, const left_factor<float>&, const offset_t*,
                                               const index_t*, const float*, const offset_t*, index_t*,
                                               float*, cudaStream_t, int, int);
}  // namespace spgemm::rmerge
