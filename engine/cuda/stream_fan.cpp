#include "cuda/stream_fan.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/device_context.hpp"

namespace spgemm::cuda {
namespace {

// The side streams of every device, shared by all jobs on it (a call leases
// the ones it uses). Never destroyed: they live as long as the process.
stream_pool& side_streams(int device) {
  static std::mutex mutex;
  static std::map<int, stream_pool*> pools;
  std::lock_guard<std::mutex> lock(mutex);
  stream_pool*& pool = pools[device];
  if (pool == nullptr) pool = new stream_pool(device);
  return *pool;
}

// The side streams of one call: the job's stream waits for them before they
// go back, also when a launch threw (the job's memory is freed in its order).
class held_sides {
 public:
  explicit held_sides(cudaStream_t job) : job_(job) {}
  ~held_sides() {
    if (joined_) return;
    for (const auto& side : sides_) {
      if (cudaEventRecord(side->event(), side->get()) == cudaSuccess) (void)cudaStreamWaitEvent(job_, side->event(), 0);
    }
  }
  held_sides(const held_sides&) = delete;
  held_sides& operator=(const held_sides&) = delete;

  // A side stream that waits for what was issued on the job's stream so far
  // (the first side's event also marks the fork).
  cudaStream_t add(stream_pool& pool) {
    sides_.push_back(std::unique_ptr<stream_pool::lease>(new stream_pool::lease(pool.acquire())));
    const stream_pool::lease& fork = *sides_.front();
    if (sides_.size() == 1) SPGEMM_CUDA_CHECK(cudaEventRecord(fork.event(), job_));
    SPGEMM_CUDA_CHECK(cudaStreamWaitEvent(sides_.back()->get(), fork.event(), 0));
    return sides_.back()->get();
  }
  void join() {
    for (const auto& side : sides_) {
      SPGEMM_CUDA_CHECK(cudaEventRecord(side->event(), side->get()));
      SPGEMM_CUDA_CHECK(cudaStreamWaitEvent(job_, side->event(), 0));
    }
    joined_ = true;
  }

 private:
  cudaStream_t job_;
  std::vector<std::unique_ptr<stream_pool::lease>> sides_;
  bool joined_ = false;
};

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
  held_sides sides(job_stream);
  std::vector<cudaStream_t> streams{job_stream};
  for (std::size_t i = 1; i < width; ++i) streams.push_back(sides.add(pool));
  for (std::size_t i = 0; i < launches.size(); ++i) launches[i](streams[i % width]);
  sides.join();
}

}  // namespace spgemm::cuda
