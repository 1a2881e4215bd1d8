// One job's course for the call that asked for it: submitted to the
// scheduler; where its result is kept and its size known before it runs (the
// same product ran before), announced early, the handle it will have drawn at
// once; at its end kept in the cache (under that handle), or handed to the
// caller to stream. Keeps the call's timeline around the job's own phases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/caller.hpp"
#include "core/job.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "core/scheduler.hpp"

namespace spgemmd::core {

// What the caller reports of a job that ended.
struct job_report {
  job_times times;
  std::size_t max_estimate = 0;  // the most its device held for it at once, by the estimates
  double flops = 0;              // 2 x scalar products
  std::string algorithm;         // the methods its steps ran, else what the call asked for
  std::string device;            // where it ran; empty where it was never placed
  int64_t nnz = 0;               // of its result, where it gave one
};

// The call's timeline beside the job's own phases (seconds): the request
// until its job was submitted; after the job's last step, releasing its
// inputs; a kept result's cache insert; and its reply until the last message
// went out.
struct call_phases {
  double request = 0, release = 0, keep = 0, reply = 0;
};

class job_run {
 public:
  // What the job ended with.
  struct ending {
    outcome result;
    entry_info kept;  // ok and kept: its cache entry
    // ok and streamed: the result on `backend`, its bytes reserved until they
    // are sent (declared first, so that a dropped ending frees the product
    // before its reservation); none where it streamed in panels (panels()).
    reservation held;
    std::shared_ptr<spgemm::backend> backend;
    std::shared_ptr<spgemm::stored_matrix> product;
  };

  // A call of `who` that began at `call_started` and wants its result kept
  // under `keep_name` (its tenant's), or streamed.
  job_run(matrix_cache& cache, scheduler& sched, caller who, bool keep, std::string keep_name,
          steady::time_point call_started);
  job_run(const job_run&) = delete;  // its job calls back into it
  job_run& operator=(const job_run&) = delete;

  // Before submit: where the result is not kept and the job computes it in
  // row panels, they stream to the call as they come (on, the default); off,
  // they are gathered in host memory and the result is kept instead (its
  // `ending` has `kept`, no product): for a call that writes its result
  // into a region, which needs its size before the first row.
  void stream_panels(bool on) { stream_panels_ = on; }

  // Submits `j` (a recipe's) as the caller's. `ended` is called once, from a scheduler
  // thread, when it ends; not where submit fails.
  outcome submit(std::shared_ptr<job> j, std::function<void(ending)> ended);
  // The entry a kept result will be, where its size is known before it runs,
  // its handle drawn now; nullopt where it is not known, or the job ended
  // already. After submit succeeded.
  std::optional<entry_info> promise() const;
  // Commits to `promised` (from promise()): the job's end keeps the result
  // under its handle, or fails. False where the job ended meanwhile. Once.
  bool announce(const entry_info& promised);
  // Cancels the job: it leaves the queue, or stops at its next phase.
  void cancel();
  // A streamed result's row panels, where the job computes it in panels:
  // they come while it runs (panel_stream::when_open), before its end.
  // After submit; null for a kept result.
  const std::shared_ptr<panel_stream>& panels() const { return panels_; }

  // Whether the job ended: true from just before its `ended` is called.
  bool over() const;
  // Once over():
  const job_report& report() const { return report_; }
  // The timeline, the reply's last message gone out at `last_write`.
  call_phases phases(steady::time_point last_write) const;

 private:
  void end(job& j, outcome result, const std::function<void(ending)>& ended);
  // Keeps the result (under the announced handle, where one went out) or hands it over for streaming.
  outcome take_result(job& j, const std::optional<entry_info>& announced, ending* e);

  matrix_cache& cache_;
  scheduler& sched_;
  const caller caller_;
  const bool keep_;
  const std::string keep_name_;
  const steady::time_point call_started_;
  steady::time_point submitted_, ended_at_, kept_at_;
  std::optional<spgemm::matrix_info> expected_;  // the result's size, known before it runs
  int expected_device_ = -1;
  job_report report_;
  std::shared_ptr<panel_stream> panels_;
  bool stream_panels_ = true;

  mutable std::mutex mu_;
  std::shared_ptr<job> job_;
  bool over_ = false;
  std::optional<entry_info> announced_;
};

}  // namespace spgemmd::core
