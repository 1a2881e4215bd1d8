// MulLimited value pass, double precision. Method: rmerge_kernels.cuh.
#include "rmerge/mul_limited_values.cuh"

namespace spgemm::rmerge {
template void launch_mul_limited_values<double>(pass_config, const left_factor<double>&, const offset_t*,
                                                const index_t*, const double*, const offset_t*, index_t*,
                                                double*, cudaStream_t, int, int);
}  // namespace spgemm::rmerge
