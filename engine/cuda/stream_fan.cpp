#include "cuda/stream_fan.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/device_context.hpp"

namespace spgemm::cuda {
namespace {

// A side stream with its two events (the fork recorded on the job's stream,
// the join recorded on the side stream), reused from call to call: creating
// and destroying events cost more host time than the launches they order.
struct lane {
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr;
  cudaEvent_t join = nullptr;
};

// The lanes of one device, shared by every job on it; a call holds the
// lanes it uses. Never destroyed: they live as long as the process.
class lane_pool {
 public:
  explicit lane_pool(int device) : device_(device) {}

  lane acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        const lane l = free_.back();
        free_.pop_back();
        return l;
      }
    }
    device_guard guard(device_);
    lane l;
    SPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    SPGEMM_CUDA_CHECK(cudaEventCreateWithFlags(&l.fork, cudaEventDisableTiming));
    SPGEMM_CUDA_CHECK(cudaEventCreateWithFlags(&l.join, cudaEventDisableTiming));
    return l;
  }
  void release(const std::vector<lane>& lanes) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.insert(free_.end(), lanes.begin(), lanes.end());
  }

 private:
  int device_;
  std::mutex mutex_;
  std::vector<lane> free_;
};

lane_pool& lanes_of(int device) {
  static std::mutex mutex;
  static std::map<int, lane_pool*> pools;
  std::lock_guard<std::mutex> lock(mutex);
  lane_pool*& pool = pools[device];
  if (pool == nullptr) pool = new lane_pool(device);
  return *pool;
}

// The lanes of one call: the job's stream waits for them when they go back
// (also when a launch threw: the job's memory is freed in its order).
class held_lanes {
 public:
  held_lanes(lane_pool& pool, cudaStream_t job) : pool_(pool), job_(job) {}
  ~held_lanes() {
    if (!joined_) {
      for (const lane& l : lanes_) {
        if (cudaEventRecord(l.join, l.stream) == cudaSuccess) (void)cudaStreamWaitEvent(job_, l.join, 0);
      }
    }
    pool_.release(lanes_);
  }
  held_lanes(const held_lanes&) = delete;
  held_lanes& operator=(const held_lanes&) = delete;

  void add(const lane& l) { lanes_.push_back(l); }
  void join() {
    for (const lane& l : lanes_) {
      SPGEMM_CUDA_CHECK(cudaEventRecord(l.join, l.stream));
      SPGEMM_CUDA_CHECK(cudaStreamWaitEvent(job_, l.join, 0));
    }
    joined_ = true;
  }

 private:
  lane_pool& pool_;
  cudaStream_t job_;
  std::vector<lane> lanes_;
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
  const std::size_t width = std::min(launches.size(), static_cast<std::size_t>(max_streams));
  held_lanes held(lanes_of(device), job_stream);
  std::vector<cudaStream_t> streams{job_stream};
  cudaEvent_t fork = nullptr;
  for (std::size_t i = 1; i < width; ++i) {
    const lane l = lanes_of(device).acquire();
    held.add(l);
    if (fork == nullptr) {
      fork = l.fork;
      SPGEMM_CUDA_CHECK(cudaEventRecord(fork, job_stream));
    }
    SPGEMM_CUDA_CHECK(cudaStreamWaitEvent(l.stream, fork, 0));
    streams.push_back(l.stream);
  }
  for (std::size_t i = 0; i < launches.size(); ++i) launches[i](streams[i % width]);
  held.join();
}

}  // namespace spgemm::cuda
