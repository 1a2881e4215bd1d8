#include "core/job_run.hpp"

#include <algorithm>
#include <chrono>

#include "core/panels/panel_stream.hpp"

namespace spgemmd::core {

namespace {

double between(steady::time_point from, steady::time_point to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

bool same_size(const spgemm::matrix_info& a, const spgemm::matrix_info& b) {
  return a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz && a.type == b.type;
}

}  // namespace

job_run::job_run(matrix_cache& cache, scheduler& sched, caller who, bool keep, std::string keep_name,
                 steady::time_point call_started)
    : cache_(cache), sched_(sched), caller_(std::move(who)), keep_(keep), keep_name_(std::move(keep_name)),
      call_started_(call_started) {}

outcome job_run::submit(std::shared_ptr<job> j, std::function<void(ending)> ended) {
  report_.algorithm = j->algorithm;
  j->owner = caller_;
  if (!keep_ && stream_panels_) {
    j->panel_out = std::make_shared<panel_stream>();
    panels_ = j->panel_out;
  }
  j->done = [this, ended = std::move(ended)](job& done, outcome result) { end(done, std::move(result), ended); };
  // While the job is this thread's: a kept result of one step that ran
  // before has its size known (the memo); that needs the job placed.
  if (keep_ && j->steps.size() == 1 && j->steps[0].gave_before) {
    sched_.place(*j);
    expected_ = j->steps[0].gave_before(*j);
    expected_device_ = j->device;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = j;
  }
  submitted_ = steady::now();
  outcome submitted = sched_.submit(std::move(j));
  if (!submitted.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    job_.reset();
  }
  return submitted;
}

std::optional<entry_info> job_run::promise() const {
  if (!expected_ || over()) return std::nullopt;
  return cache_.promise_stored(*expected_, expected_device_, keep_name_, 0);
}

bool job_run::announce(const entry_info& promised) {
  std::lock_guard<std::mutex> lock(mu_);
  if (over_) return false;
  announced_ = promised;
  return true;
}

void job_run::cancel() {
  std::shared_ptr<job> j;
  {
    std::lock_guard<std::mutex> lock(mu_);
    j = job_;
  }
  if (j) j->cancel.cancel();
  sched_.poke();
}

bool job_run::over() const {
  std::lock_guard<std::mutex> lock(mu_);
  return over_;
}

call_phases job_run::phases(steady::time_point last_write) const {
  call_phases p;
  p.request = between(call_started_, submitted_);
  const job_times& t = report_.times;
  p.release = std::max(0.0, between(submitted_, ended_at_) - t.queue - t.handoff - t.compute);
  if (keep_ && kept_at_ > ended_at_) {
    p.keep = between(ended_at_, kept_at_);
    p.reply = between(kept_at_, last_write);
  }
  return p;
}

void job_run::end(job& j, outcome result, const std::function<void(ending)>& ended) {
  std::optional<entry_info> announced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    over_ = true;
    announced = announced_;
  }
  ended_at_ = steady::now();
  report_.times = j.times;
  report_.max_estimate = j.max_estimate;
  report_.flops = 2.0 * static_cast<double>(j.products);
  if (!j.methods.empty()) report_.algorithm = j.methods;
  if (j.device >= 0) report_.device = cache_.backends()[static_cast<std::size_t>(j.device)]->name();
  ending e;
  e.result = result.ok() ? take_result(j, announced, &e) : std::move(result);
  ended(std::move(e));
}

outcome job_run::take_result(job& j, const std::optional<entry_info>& announced, ending* e) {
  try {
    if (j.streamed) {  // its panels went to the call as they were computed
      report_.nnz = j.streamed->nnz;
      return {};
    }
    const spgemm::matrix_info info = j.host_result ? j.host_result->info() : j.result->info();
    report_.nnz = info.nnz;
    if (!keep_ && !j.host_result) {
      e->backend = cache_.backends()[static_cast<std::size_t>(j.device)];
      e->product = std::move(j.result);
      e->held = std::move(j.res);
      return {};
    }
    // Kept from here on; a result not to be kept that was gathered in host
    // memory (in row panels, not streamed: stream_panels(false)) is kept
    // instead, with no product in the ending.
    // A call gone (cancelled, past its deadline) would leave the result
    // cached until its TTL, its handle known to no one.
    if (j.cancel.cancelled()) return {status::cancelled, "the call was cancelled; its result is not kept"};
    if (announced && !same_size(info, announced->info)) {
      return {status::internal, "the product has nnz " + std::to_string(info.nnz) + ", not the " +
                                    std::to_string(announced->info.nnz) +
                                    " it had before and its handle announced; retry"};
    }
    const entry_info* promised = announced ? &*announced : nullptr;
    if (j.host_result) {
      // Its name counts in the host budget beside its bytes (insert_host_result takes it).
      e->kept = cache_.insert_host_result(caller_, j.host_res, std::move(j.host_result), keep_name_, 0, promised);
    } else {
      // Its name counts in the budget beside its bytes.
      if (!j.res.try_grow(keep_name_.size())) {
        return {status::does_not_fit, "no room left for the kept result's name on its device; retry later"};
      }
      e->kept = cache_.insert_stored(caller_, j.res, std::move(j.result), keep_name_, 0, promised);
    }
    j.res.release();
    kept_at_ = steady::now();
    return {};
  } catch (...) {
    return outcome_of(std::current_exception());
  }
}

}  // namespace spgemmd::core
