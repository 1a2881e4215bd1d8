#include "cuda/stream_fan.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/device_context.hpp"

namespace spgemm::cuda {
namespace {

// The side streams of every device, shared by all jobs on it (a lease holds
// one for the duration of a call). Never destroyed: they live as long as the
// process.
stream_pool& side_streams(int device) {
  static std::mutex mutex;
  static std::map<int, stream_pool*> pools;
  std::lock_guard<std::mutex> lock(mutex);
  stream_pool*& pool = pools[device];
  if (pool == nullptr) pool = new stream_pool(device);
  return *pool;
}

// `waiter` waits for the work issued on `stream` so far. The event may be
// destroyed at once: the wait holds on to what it needs.
cudaError_t wait_for(cudaStream_t waiter, cudaStream_t stream) {
  cudaEvent_t e = nullptr;
  cudaError_t status = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (status != cudaSuccess) return status;
  status = cudaEventRecord(e, stream);
  if (status == cudaSuccess) status = cudaStreamWaitEvent(waiter, e, 0);
  (void)cudaEventDestroy(e);
  return status;
}

}  // namespace

void launch_side_by_side(cudaStream_t job_stream, const std::vector<launch_fn>& launches, int max_streams) {
  if (launches.size() <= 1 || max_streams <= 1) {
    for (const launch_fn& launch : launches) launch(job_stream);
    return;
  }
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  stream_pool& pool = side_streams(device);
  const std::size_t width = std::min(launches.size(), static_cast<std::size_t>(max_streams));
  std::vector<std::unique_ptr<stream_pool::lease>> sides;
  std::vector<cudaStream_t> streams{job_stream};
  for (std::size_t i = 1; i < width; ++i) {
    sides.push_back(std::unique_ptr<stream_pool::lease>(new stream_pool::lease(pool.acquire())));
    streams.push_back(sides.back()->get());
    SPGEMM_CUDA_CHECK(wait_for(streams.back(), job_stream));
  }
  // Also when a launch throws, the job's stream waits for the side streams:
  // the job's memory is freed in its order.
  struct join_guard {
    cudaStream_t job;
    const std::vector<cudaStream_t>& streams;
    bool joined = false;
    void join() {
      for (std::size_t i = 1; i < streams.size(); ++i) SPGEMM_CUDA_CHECK(wait_for(job, streams[i]));
      joined = true;
    }
    ~join_guard() {
      if (joined) return;
      for (std::size_t i = 1; i < streams.size(); ++i) (void)wait_for(job, streams[i]);
    }
  } guard{job_stream, streams};
  for (std::size_t i = 0; i < launches.size(); ++i) launches[i](streams[i % width]);
  guard.join();
}

}  // namespace spgemm::cuda
