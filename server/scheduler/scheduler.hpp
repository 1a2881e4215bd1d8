// The scheduler: estimate -> admit -> place -> run.
//
// A job is a list of steps (a multiply or a transpose: one step; a Galerkin
// product: transpose, multiply, multiply). Before each step runs, the engine
// sizes it (backend::estimate_multiply / estimate_transpose) and the job's
// reservation on its device grows by the estimate; the step is admitted only
// where that fits beside what runs and what is cached there (spilling cold,
// unpinned cache entries to the host for room). After a step the reservation
// shrinks to what the job still holds (intermediates, then the result). A job
// that can not be admitted waits in a bounded queue ordered by priority,
// FIFO within a priority; between its steps a job keeps its place. It is
// rejected with RESOURCE_EXHAUSTED only when it could never fit (its inputs,
// what it holds and the step's estimate exceed the device budget) or the
// queue is full. A job runs on the device where most of its input bytes are
// cached, else on the device with the most room; up to `workers` jobs run at
// once per device. A cancelled job leaves the queue at once, or stops at the
// engine's next phase boundary, and releases everything it held.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/support/status.h>

#include "cache/matrix_cache.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd {

struct job;

// Where a job's time went on the server (seconds, summed over its steps):
// its part of the call's per-phase timeline (logs, spgemmd_phase_seconds).
struct job_times {
  double queue = 0;     // submitted -> admitted: waiting, then admission (JobStats.queue_ms)
  double admit = 0;     // of queue: the admission that succeeded (residency, estimate, reservation)
  double estimate = 0;  // of admit: sizing the step (a memo lookup, or the engine's pass)
  double handoff = 0;   // admitted -> running on the thread that runs it
  double compute = 0;   // the step on that thread (JobStats.compute_ms)
  double engine = 0;    // of compute: the backend's call
};

struct job_step {
  std::string what;  // "multiply", "transpose" (logs)
  // What the step will allocate on the job's device, and the work and method it runs.
  std::function<spgemm::memory_estimate(job&, spgemm::backend&)> estimate;
  // Runs the step; returns the bytes the job holds on the device afterwards.
  std::function<std::size_t(job&, spgemm::backend&)> run;
  // Optional: the matrix the same step gave when it ran before on the job's
  // device (placed), where known.
  std::function<std::optional<spgemm::matrix_info>(const job&)> gave_before;
};

struct job {
  std::string kind;  // "multiply", "galerkin", "transpose"
  int priority = 0;
  std::vector<pin> inputs;  // pinned by the caller
  std::vector<job_step> steps;
  spgemm::cancel_token cancel;
  // Called once when the job ends: OK (result below, reservation holding its
  // bytes) or the error. From a scheduler thread; must not block for long.
  std::function<void(job&, grpc::Status)> done;

  // Filled as the job goes:
  int device = -1;
  std::vector<std::shared_ptr<spgemm::stored_matrix>> resident;  // inputs, on `device`
  std::vector<std::shared_ptr<spgemm::stored_matrix>> temps;      // intermediates
  std::shared_ptr<spgemm::stored_matrix> result;
  reservation res;
  std::size_t next_step = 0;
  std::size_t max_estimate = 0;
  job_times times;
  std::int64_t products = 0;  // scalar multiplications of every step
  std::string methods;        // the methods the steps ran, "+"-joined

  // The estimate the running step was admitted with: the engine's memory
  // limit for it (backend::multiply).
  std::size_t step_estimate = 0;

  // Internal.
  uint64_t seq = 0;
  steady::time_point queued_at, admitted_at;
  bool step_estimated = false;
};

struct scheduler_stats {
  int queue_depth = 0;
  int running = 0;
  std::vector<int> running_per_device;
  int64_t completed = 0, failed = 0;
};

class scheduler {
 public:
  // A worker that ran a job on a GPU stays awake this long (yielding) for
  // the next before it sleeps: a client's next product (a chain, a repeated
  // product) then starts without the wake-up of a sleeping thread.
  static constexpr std::chrono::microseconds linger_time{1000};

  scheduler(matrix_cache& cache, int max_queue, int workers_per_device);
  ~scheduler();

  // Queues a job; RESOURCE_EXHAUSTED when the queue is full, UNAVAILABLE when
  // stopped. A worker runs it, never the caller: on the H100 the engine ran
  // 0.06 to 0.1 ms slower on a gRPC thread just woken by the request than on
  // a worker, more than waking a worker costs (bench/results/h100-service.md).
  grpc::Status submit(std::shared_ptr<job> j);
  // Chooses the job's device, once (submit does where it was not done):
  // where most of its input bytes are, else the roomiest.
  void place(job& j);
  // Wakes the dispatcher (memory was freed, a job was cancelled).
  void poke();
  // Ends every queued job with UNAVAILABLE, cancels running ones and waits for them.
  void stop();
  scheduler_stats stats();

 private:
  void dispatch_loop();
  void worker_loop();
  // Waits, lock released, until work is posted or linger_time passes.
  void linger(std::unique_lock<std::mutex>& lock);
  // One admission pass over the queue (lock held on entry and exit; one pass
  // at a time). With `take`, the first job admitted is returned for the
  // caller to run itself (no hand-off to another thread); the rest go to
  // ready_.
  std::shared_ptr<job> admit_pass(std::unique_lock<std::mutex>& lock, bool take);
  void run_job(std::unique_lock<std::mutex>& lock, std::shared_ptr<job> j);
  // One admission attempt for the head job. Lock not held.
  enum class outcome { admitted, wait, finished };
  outcome try_admit(const std::shared_ptr<job>& j, grpc::Status* status);
  void finish(const std::shared_ptr<job>& j, grpc::Status status);
  void enqueue_locked(std::shared_ptr<job> j);
  void release_resident(job& j);

  matrix_cache& cache_;
  int max_queue_;
  int workers_per_device_;
  std::mutex mutex_;
  std::condition_variable dispatch_cv_, work_cv_;
  std::list<std::shared_ptr<job>> queue_;  // sorted: priority desc, seq asc
  std::list<std::shared_ptr<job>> ready_;  // admitted, waiting for a worker
  std::vector<int> running_;
  int running_total_ = 0;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  bool dirty_ = true;
  bool dispatching_ = false;  // an admission pass runs (dispatcher or a worker)
  int lingering_ = 0;         // workers in linger()
  std::atomic<uint64_t> posted_{0};  // bumped when a job is queued or made ready (linger watches it)
  int64_t completed_ = 0, failed_ = 0;
  std::thread dispatcher_;
  std::vector<std::thread> workers_;
};

}  // namespace spgemmd
