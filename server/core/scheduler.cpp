#include "core/scheduler.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace spgemmd::core {

namespace {

double seconds_between(steady::time_point from, steady::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

double seconds_since(steady::time_point t) { return seconds_between(t, steady::now()); }

// The bytes of the job's inputs, each counted once; with `owner`, only its tenant's.
std::size_t unique_input_bytes(const job& j, const std::string* owner = nullptr) {
  std::set<const cache_entry*> seen;
  std::size_t bytes = 0;
  for (const auto& p : j.inputs) {
    if ((owner == nullptr || p->tenant == *owner) && seen.insert(&*p).second) bytes += p->bytes;
  }
  return bytes;
}

}  // namespace

scheduler::scheduler(matrix_cache& cache, int max_queue, int workers_per_device)
    : cache_(cache), max_queue_(max_queue), workers_per_device_(std::max(1, workers_per_device)) {
  running_.assign(cache_.backends().size(), 0);
  dispatcher_ = std::thread([this] { dispatch_loop(); });
  const std::size_t n = cache_.backends().size() * static_cast<std::size_t>(workers_per_device_);
  for (std::size_t i = 0; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
}

scheduler::~scheduler() { stop(); }

void scheduler::enqueue_locked(std::shared_ptr<job> j) {
  j->queued_at = steady::now();
  // A job between its steps goes before any that has not started: it holds
  // memory (its intermediates) that only its end frees, so a head waiting for
  // memory must not block it.
  auto started = [](const job& x) { return x.next_step > 0; };
  auto goes_before = [&](const job& a, const job& b) {
    if (started(a) != started(b)) return started(a);
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.seq < b.seq;
  };
  auto it = std::find_if(queue_.begin(), queue_.end(),
                         [&](const std::shared_ptr<job>& o) { return goes_before(*j, *o); });
  ++tenants_[j->owner.tenant].jobs.queue_depth;
  queue_.insert(it, std::move(j));
  dirty_ = true;
  posted_.fetch_add(1, std::memory_order_relaxed);
}

void scheduler::dequeued_locked(const job& j) { --tenants_[j.owner.tenant].jobs.queue_depth; }

std::shared_ptr<job> scheduler::next_in_turn_locked(const std::vector<bool>& blocked) {
  auto held_up = [&](const job& j) { return j.device >= 0 && blocked[static_cast<std::size_t>(j.device)]; };
  auto it = queue_.begin();
  // Between their steps (at the front): first, whatever their tenants' quotas.
  for (; it != queue_.end() && (*it)->next_step > 0; ++it) {
    if (!held_up(**it)) return *it;
  }
  while (it != queue_.end()) {
    // One priority: the job of the fewest ahead of it of its own tenant, the
    // tenant served least recently first, then the earliest.
    const int priority = (*it)->priority;
    std::map<std::string, int> ahead;
    std::shared_ptr<job> best;
    std::tuple<int, uint64_t, uint64_t> best_turn;
    for (; it != queue_.end() && (*it)->priority == priority; ++it) {
      const job& j = **it;
      const int rank = ahead[j.owner.tenant]++;
      if (held_up(j)) continue;  // its device's head waits for memory
      const tenant_jobs& t = tenants_[j.owner.tenant];
      const int most = j.owner.limits.running_jobs;
      if (most > 0 && t.jobs.running >= most) continue;
      const auto turn = std::make_tuple(rank, t.last_served, j.seq);
      if (!best || turn < best_turn) {
        best = *it;
        best_turn = turn;
      }
    }
    if (best) return best;  // else every tenant of this priority is at its running_jobs quota
  }
  return nullptr;
}

outcome scheduler::submit(std::shared_ptr<job> j) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return {status::shutting_down, "the server is shutting down"};
  if (static_cast<int>(queue_.size()) >= max_queue_) {
    return {status::queue_full,
            "the job queue is full (" + std::to_string(queue_.size()) + " jobs waiting); retry later"};
  }
  const int most = j->owner.limits.queued_jobs;
  if (most > 0 && tenants_[j->owner.tenant].jobs.queue_depth >= most) {
    return {status::over_quota, "tenant '" + j->owner.tenant + "' is at its queued_jobs quota: " +
                                    std::to_string(most) + " of its jobs wait already; retry when they have run"};
  }
  j->seq = next_seq_++;
  enqueue_locked(j);
  // An idle worker admits and runs what waits; when every worker is busy,
  // the one that finishes first looks at the queue.
  // A worker lingering after its job takes it without a wake-up.
  const bool wake = queue_.size() > static_cast<std::size_t>(lingering_);
  lock.unlock();
  if (wake) work_cv_.notify_one();
  return {};
}

void scheduler::poke() {
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dirty_ = true;
    queued = !queue_.empty();
  }
  // Nothing waits: the next submit admits at once, no need to wake anyone.
  if (queued) dispatch_cv_.notify_one();
}

scheduler_stats scheduler::stats_of(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mutex_);
  scheduler_stats s = tenants_[tenant].jobs;
  s.running_per_device.resize(running_.size(), 0);
  s.queued_per_device.assign(running_.size(), 0);
  for (const auto& j : queue_) {
    if (j->owner.tenant == tenant && j->device >= 0) ++s.queued_per_device[static_cast<std::size_t>(j->device)];
  }
  return s;
}

scheduler_stats scheduler::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  scheduler_stats s;
  s.queue_depth = static_cast<int>(queue_.size());
  s.running = running_total_;
  s.running_per_device = running_;
  s.queued_per_device.assign(running_.size(), 0);
  for (const auto& j : queue_) {
    if (j->device >= 0) ++s.queued_per_device[static_cast<std::size_t>(j->device)];
  }
  s.completed = completed_;
  s.failed = failed_;
  return s;
}

void scheduler::place(job& j) {
  if (j.device >= 0) return;
  std::vector<cache_entry*> entries;
  for (auto& p : j.inputs) entries.push_back(&*p);
  int d = cache_.preferred_device(entries);
  if (d < 0) d = cache_.roomiest_device();
  j.device = d;
  j.res = reservation(&cache_, d);
}

bool scheduler::go_in_panels(job& j, const std::optional<spgemm::memory_estimate>& whole) {
  job_step& step = j.steps[j.next_step];
  if (!step.in_panels) return false;
  release_resident(j);  // the panels read the inputs where they are
  step = step.in_panels(whole);
  j.step_estimated = false;
  return true;
}

scheduler::admission scheduler::try_admit(const std::shared_ptr<job>& j, outcome* ended) {
  if (j->cancel.cancelled()) {
    *ended = {status::cancelled, "the call was cancelled while the job was queued"};
    return admission::finished;
  }
  place(*j);
  const int d = j->device;
  const std::size_t budget = cache_.budget(d);
  const bool in_place = j->steps[j->next_step].inputs_in_place;
  const std::size_t input_bytes = in_place ? 0 : unique_input_bytes(*j);
  const std::size_t quota = j->owner.limits.device_bytes;
  if (const std::size_t own = in_place ? 0 : unique_input_bytes(*j, &j->owner.tenant); quota > 0 && own > quota) {
    *ended = {status::over_quota, "the job's inputs of tenant '" + j->owner.tenant + "' take " +
                                      std::to_string(own) + " bytes, over its device_bytes quota of " +
                                      std::to_string(quota) + ": they can never be on a device together"};
    return admission::finished;
  }
  if (input_bytes > budget) {
    if (go_in_panels(*j, std::nullopt)) return try_admit(j, ended);
    *ended = {status::does_not_fit,
              "the job's inputs take " + std::to_string(input_bytes) + " bytes; the budget of " +
                  cache_.backends()[d]->name() + " is " + std::to_string(budget) + " bytes"};
    return admission::finished;
  }
  bool busy = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy = running_[d] >= workers_per_device_;
  }
  if (busy) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    release_resident(*j);  // a job between its steps held its inputs there
    return admission::wait;
  }
  try {
    if (!j->steps[j->next_step].inputs_in_place && j->resident.size() != j->inputs.size()) {
      j->resident.clear();
      for (auto& p : j->inputs) {
        auto s = cache_.make_resident(*p, d);
        if (!s) {
          release_resident(*j);
          return admission::wait;
        }
        j->resident.push_back(std::move(s));
      }
    }
    if (!j->step_estimated) {
      const steady::time_point sizing = steady::now();
      const spgemm::memory_estimate e = j->steps[j->next_step].estimate(*j, *cache_.backends()[d]);
      j->times.estimate += seconds_since(sizing);
      j->step_estimate = e.total();
      j->step_sized = e;
      j->step_estimated = true;
      j->max_estimate = std::max(j->max_estimate, j->step_estimate + j->res.bytes());
    }
  } catch (...) {
    *ended = outcome_of(std::current_exception());
    return admission::finished;
  }
  const std::size_t need = input_bytes + j->res.bytes() + j->step_estimate;
  if (need > budget) {
    if (go_in_panels(*j, j->step_sized)) return try_admit(j, ended);
    *ended = {status::does_not_fit,
              "the job needs " + std::to_string(need) + " bytes (inputs " + std::to_string(input_bytes) +
                  ", estimate of its " + j->steps[j->next_step].what + " " + std::to_string(j->step_estimate) +
                  "); the budget of " + cache_.backends()[d]->name() + " is " + std::to_string(budget) +
                  " bytes, so it can never run there"};
    return admission::finished;
  }
  if (!j->res.try_grow(j->step_estimate)) {
    release_resident(*j);
    return admission::wait;
  }
  return admission::admitted;
}

std::shared_ptr<job> scheduler::admit_pass(std::unique_lock<std::mutex>& lock, bool take) {
  dispatching_ = true;
  std::shared_ptr<job> mine;
  while (dirty_ && !stopping_) {
    dirty_ = false;
    std::vector<std::shared_ptr<job>> cancelled;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if ((*it)->cancel.cancelled()) {
        cancelled.push_back(*it);
        dequeued_locked(**it);
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (!cancelled.empty()) {
      lock.unlock();
      for (auto& j : cancelled) {
        j->times.queue += seconds_since(j->queued_at);
        finish(j, {status::cancelled, "the call was cancelled while the job was queued"});
      }
      lock.lock();
    }
    // Admit in turn while jobs fit. A job that waits for memory blocks the
    // jobs after it on its device (so that a large one is not passed over
    // forever), not those placed on others: an idle GPU takes its next job
    // while another's head waits.
    std::vector<bool> blocked(cache_.backends().size(), false);
    while (!stopping_) {
      auto j = next_in_turn_locked(blocked);
      if (!j) break;
      if (j->device < 0) {
        // Placed first: a job of no device yet must not pass a head of its
        // device that waits (one that found the device busy an instant
        // before a running job ended).
        lock.unlock();
        place(*j);
        lock.lock();
        if (stopping_) break;
        if (blocked[static_cast<std::size_t>(j->device)]) continue;
      }
      lock.unlock();
      outcome ended;
      const steady::time_point admitting = steady::now();
      const admission a = try_admit(j, &ended);
      lock.lock();
      if (stopping_) break;  // the queue was handed to the dispatcher, `j` with it
      if (a == admission::wait) {
        blocked[static_cast<std::size_t>(j->device)] = true;
        continue;
      }
      queue_.remove(j);
      dequeued_locked(*j);
      j->admitted_at = steady::now();
      j->times.queue += seconds_between(j->queued_at, j->admitted_at);
      if (a == admission::admitted) {
        j->times.admit += seconds_between(admitting, j->admitted_at);
        ++running_[j->device];
        ++running_total_;
        tenant_jobs& t = tenants_[j->owner.tenant];
        t.jobs.running_per_device.resize(running_.size(), 0);
        ++t.jobs.running_per_device[j->device];
        ++t.jobs.running;
        t.last_served = ++serve_clock_;
        if (take && !mine) {
          mine = std::move(j);
        } else {
          ready_.push_back(std::move(j));
          posted_.fetch_add(1, std::memory_order_relaxed);
          work_cv_.notify_one();
        }
      } else {
        lock.unlock();
        finish(j, std::move(ended));
        lock.lock();
      }
    }
  }
  dispatching_ = false;
  return mine;
}

void scheduler::dispatch_loop() {
  // The fallback: idle workers admit jobs themselves (worker_loop); this
  // thread retries waiting jobs when memory is freed (poke) and every 20 ms.
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    dispatch_cv_.wait_for(lock, std::chrono::milliseconds(20),
                          [&] { return stopping_ || (dirty_ && !dispatching_ && !queue_.empty()); });
    if (stopping_) break;
    if (dispatching_ || queue_.empty()) continue;
    dirty_ = true;
    admit_pass(lock, false);
  }
  // Stopping: whatever still waits ends now.
  std::list<std::shared_ptr<job>> left;
  left.swap(queue_);
  for (const auto& j : left) dequeued_locked(*j);
  lock.unlock();
  for (auto& j : left) finish(j, {status::shutting_down, "the server is shutting down"});
}

void scheduler::run_job(std::unique_lock<std::mutex>& lock, std::shared_ptr<job> j) {
  lock.unlock();
  outcome ended;
  const auto t0 = steady::now();
  j->times.handoff += seconds_between(j->admitted_at, t0);
  try {
    const std::size_t held = j->steps[j->next_step].run(*j, *cache_.backends()[j->device]);
    j->res.shrink_to(held);
    j->products += j->step_sized.products;
    j->methods += (j->methods.empty() ? "" : " + ") + j->step_sized.method;
  } catch (...) {
    ended = outcome_of(std::current_exception());
  }
  j->times.compute += seconds_since(t0);
  ++j->next_step;
  j->step_estimated = false;

  bool done = true;
  lock.lock();
  --running_[j->device];
  --running_total_;
  tenant_jobs& t = tenants_[j->owner.tenant];
  --t.jobs.running_per_device[j->device];
  --t.jobs.running;
  dirty_ = true;
  if (ended.ok() && j->next_step < j->steps.size()) {
    if (j->cancel.cancelled()) {
      ended = {status::cancelled, "the call was cancelled"};
    } else if (stopping_) {
      ended = {status::shutting_down, "the server is shutting down"};
    } else {
      enqueue_locked(j);  // keeps its place: same priority and sequence number
      done = false;
    }
  }
  if (done) {
    lock.unlock();
    finish(j, std::move(ended));
    lock.lock();
  }
  // This worker looks at the queue next (dirty_ is set): no wake-up needed.
}

void scheduler::linger(std::unique_lock<std::mutex>& lock) {
  const uint64_t seen = posted_.load(std::memory_order_relaxed);
  ++lingering_;
  lock.unlock();
  const steady::time_point until = steady::now() + linger_time;
  // Yields rather than spins: other threads get the core when they want it.
  while (posted_.load(std::memory_order_relaxed) == seen && steady::now() < until) std::this_thread::yield();
  lock.lock();
  --lingering_;
}

void scheduler::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto has_work = [&] { return stopping_ || !ready_.empty() || (dirty_ && !dispatching_ && !queue_.empty()); };
  // Whether this worker just ran a job on a GPU: it lingers then. (On the
  // CPU backend the cores are the engine's.)
  bool ran_on_gpu = false;
  while (true) {
    if (ran_on_gpu && !has_work()) linger(lock);
    work_cv_.wait(lock, has_work);
    std::shared_ptr<job> j;
    if (!ready_.empty()) {
      j = std::move(ready_.front());
      ready_.pop_front();
    } else if (stopping_) {
      break;  // and nothing left
    } else {
      // An idle worker admits the head job and runs it itself: no hop
      // through the dispatcher and back.
      j = admit_pass(lock, true);
      if (dirty_ && !queue_.empty()) work_cv_.notify_one();
    }
    ran_on_gpu = j && cache_.backends()[j->device]->is_gpu();
    if (j) run_job(lock, std::move(j));
  }
}

void scheduler::release_resident(job& j) {
  // The job's references go first: an entry released may spill at once, and
  // its device copy must go with it, or the device holds more than the cache counts.
  const std::size_t n = j.resident.size();
  j.resident.clear();
  for (std::size_t i = 0; i < n; ++i) cache_.release_resident(*j.inputs[i]);
}

void scheduler::finish(const std::shared_ptr<job>& j, outcome ended) {
  release_resident(*j);
  j->temps.clear();
  j->inputs.clear();  // unpins
  if (!ended.ok()) {  // freed before the call hears of it
    j->result.reset();
    j->res.release();
    j->host_result.reset();
    j->host_res.release();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dirty_ = true;  // memory freed: the caller's thread (worker or dispatcher) looks at the queue next
    scheduler_stats& t = tenants_[j->owner.tenant].jobs;
    if (ended.ok()) {
      ++completed_;
      ++t.completed;
    } else {
      ++failed_;
      ++t.failed;
    }
  }
  if (j->done) {
    auto done = std::move(j->done);
    done(*j, std::move(ended));
  }
  // What the callback left of the result and its reservation (a kept result
  // its call no longer wants) goes now, not with the job's last reference:
  // that may drop under this scheduler's lock, and freed memory pokes the
  // scheduler.
  j->result.reset();
  j->res.release();
  j->host_result.reset();
  j->host_res.release();
}

void scheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && !dispatcher_.joinable()) return;
    stopping_ = true;
  }
  dispatch_cv_.notify_all();
  work_cv_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  for (auto& w : workers_) {
    if (w.joinable()) w.join();
  }
  workers_.clear();
}

}  // namespace spgemmd::core
