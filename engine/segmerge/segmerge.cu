// The segmerge method: bhSPARSE's framework with its long rows by segmented
// merge, run through the table of methods (see segmerge.hpp). The kernels
// are bhsparse's (engine/bhsparse/bhsparse_kernels.cuh, segmerge_kernels.cuh)
// and the segmented merge primitive's (engine/cuda/segmented_merge.cuh).
#include "segmerge/segmerge.hpp"

namespace spgemm::segmerge {
namespace {

// The job as the bhsparse method runs it for this one: its tuning with the
// long rows by segmented merge.
struct bhsparse_job {
  tuning t;
  method::job job;
  explicit bhsparse_job(const method::job& j)
      : t(with_segmented_merge(j.tuning)),
        job{j.a, j.b, j.value_bytes, t, j.facts, j.methods, j.memory, j.stream, j.cancel} {}
  static tuning with_segmented_merge(tuning t) {
    t.bhsparse_segmented_merge = 1;
    return t;
  }
};

}  // namespace

memory_estimate estimate(const method::job& job) {
  const bhsparse_job j(job);
  return job.methods.find(algorithm::bhsparse).estimate(j.job);
}

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  const bhsparse_job j(job);
  return job.methods.find(algorithm::bhsparse).run<T>(j.job, a, b);
}

template cuda::device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template cuda::device_csr<double> run(const method::job&, const cuda::csr_view<double>&,
                                      const cuda::csr_view<double>&);

}  // namespace spgemm::segmerge
