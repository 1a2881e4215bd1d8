// A job: the steps of one call (a recipe built them: recipes/), the inputs
// they read, and what the scheduler fills in as it runs them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

struct job;
class panel_stream;

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
  // Optional: the same step computed in row panels (recipes/panelled_multiply),
  // for when it can never fit its device in one piece. Given the one-piece
  // estimate where it was made (none where the inputs alone do not fit).
  std::function<job_step(const std::optional<spgemm::memory_estimate>& whole)> in_panels;
  // The step reads its inputs where they are (it uses them in place): the
  // scheduler neither makes them resident nor counts them on the job's device.
  bool inputs_in_place = false;
};

struct job {
  std::string kind;       // "multiply", "galerkin", "transpose"
  caller owner;           // whose call it is: its tenant's turn and quotas
  std::string algorithm;  // what the call asked for ("auto", "hash", "transpose"), until `methods` says what ran
  int priority = 0;
  std::vector<pin> inputs;  // pinned by the caller
  std::vector<job_step> steps;
  spgemm::cancel_token cancel;
  // Called once when the job ends: OK (result below, reservation holding its
  // bytes) or why not. From a scheduler thread; must not block for long.
  std::function<void(job&, outcome)> done;

  // Filled as the job goes:
  int device = -1;
  std::vector<std::shared_ptr<spgemm::stored_matrix>> resident;  // inputs, on `device`
  reservation res;  // before what it reserves for: a job dropped frees its matrices first
  std::vector<std::shared_ptr<spgemm::stored_matrix>> temps;      // intermediates
  std::shared_ptr<spgemm::stored_matrix> result;
  // A result gathered in host memory instead (computed in row panels, kept),
  // and the host budget it holds.
  std::shared_ptr<const host_matrix> host_result;
  reservation host_res;  // in the host budget (matrix_cache::host)
  // Where a streamed result's row panels go while the job computes them
  // (set by the call for a streamed result; used where the job runs in panels),
  // and the size of the result they made.
  std::shared_ptr<panel_stream> panel_out;
  std::optional<spgemm::matrix_info> streamed;
  std::size_t next_step = 0;
  std::size_t max_estimate = 0;
  job_times times;
  std::int64_t products = 0;  // scalar multiplications of every step
  std::string methods;        // the methods the steps ran, "+"-joined
  // The estimate the running step was admitted with: the engine's memory
  // limit for it (backend::multiply).
  std::size_t step_estimate = 0;
  // The running step's estimate in full: the work and the method it counts
  // towards `products` and `methods` once it ran (a step may say better).
  spgemm::memory_estimate step_sized;

  // The scheduler's.
  uint64_t seq = 0;
  steady::time_point queued_at, admitted_at;
  bool step_estimated = false;
};

}  // namespace spgemmd::core
