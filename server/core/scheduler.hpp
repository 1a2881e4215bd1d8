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
// tenants taking turns within a priority (below), FIFO within a tenant; a job
// between its steps goes first, since only its end frees what it holds. A job that waits holds no input on the device:
// those stay free to spill. It is rejected (does_not_fit) only when it could
// never fit: its inputs, what it holds and the step's estimate exceed the
// device budget, and the step has no form in row panels (a product has: it
// then runs in panels, recipes/panelled_multiply); a full queue turns it away
// (queue_full). A job runs on the device where most of its input bytes are
// cached, else on the device with the most room; up to `workers` jobs run at
// once per device. A job that waits holds up the jobs after it on its device
// only. A cancelled job leaves the queue at once, or stops at the engine's
// next phase boundary, and releases everything it held.
//
// Tenants take turns within a priority: the next job is the earliest of the
// tenant with the fewest jobs ahead of it in that priority, the tenant served
// least recently first among equals, so one tenant's burst delays another's
// job by at most one of its own at a time. A tenant at its running_jobs quota
// waits (the others go on); one with its queued_jobs quota waiting is turned
// away (over_quota), and so is a job whose own inputs exceed its tenant's
// device_bytes quota (they could never be on the devices together). A job
// between its steps is held back by neither.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/job.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"

namespace spgemmd::core {

// The whole scheduler's jobs, or one tenant's.
struct scheduler_stats {
  int queue_depth = 0;
  int running = 0;
  std::vector<int> running_per_device;
  std::vector<int> queued_per_device;  // jobs waiting, by the device they were placed on (unplaced: none)
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

  // Queues a job; queue_full when the queue is full, over_quota when its
  // tenant has its queued_jobs quota waiting, shutting_down when stopped (its
  // `done` is not called then). A worker runs it, never the
  // caller: on the H100 the engine ran 0.06 to 0.1 ms slower on a gRPC thread
  // just woken by the request than on a worker, more than waking a worker
  // costs (bench/results/h100-service.md).
  outcome submit(std::shared_ptr<job> j);
  // Chooses the job's device, once (submit does where it was not done):
  // where most of its input bytes are, else the roomiest.
  void place(job& j);
  // Wakes the dispatcher (memory was freed, a job was cancelled).
  void poke();
  // Ends every queued job with shutting_down, cancels running ones and waits for them.
  void stop();
  scheduler_stats stats();
  scheduler_stats stats_of(const std::string& tenant);

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
  enum class admission { admitted, wait, finished };
  admission try_admit(const std::shared_ptr<job>& j, outcome* ended);
  // Where the job's next step can never fit its device in one piece and has
  // a form in row panels: that form replaces it (its inputs left where they
  // are). False where it has none.
  bool go_in_panels(job& j, const std::optional<spgemm::memory_estimate>& whole);
  void finish(const std::shared_ptr<job>& j, outcome ended);
  void enqueue_locked(std::shared_ptr<job> j);
  // Takes `j`, which left the queue, off its tenant's count. Lock held.
  void dequeued_locked(const job& j);
  // The queued job whose turn it is (see above), passing over those placed
  // on a `blocked` device (whose head waits); nullptr where every tenant
  // waiting is at its running_jobs quota or held up. Lock held.
  std::shared_ptr<job> next_in_turn_locked(const std::vector<bool>& blocked);
  void release_resident(job& j);

  matrix_cache& cache_;
  int max_queue_;
  int workers_per_device_;
  std::mutex mutex_;
  std::condition_variable dispatch_cv_, work_cv_;
  std::list<std::shared_ptr<job>> queue_;  // sorted: started first, priority desc, seq asc
  std::list<std::shared_ptr<job>> ready_;  // admitted, waiting for a worker
  std::vector<int> running_;
  int running_total_ = 0;
  struct tenant_jobs {
    scheduler_stats jobs;
    uint64_t last_served = 0;  // serve_clock_ when a job of it was last admitted; 0: never
  };
  std::map<std::string, tenant_jobs> tenants_;
  uint64_t serve_clock_ = 0;
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

}  // namespace spgemmd::core
