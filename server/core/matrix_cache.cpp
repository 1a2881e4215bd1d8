#include "core/matrix_cache.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <type_traits>
#include <variant>

#include "core/outcome.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::core {

std::size_t entry_bytes(const spgemm::matrix_info& info, const std::string& name) { return info.bytes() + name.size(); }

namespace {

// Why a matrix of `bytes` more does not fit `tenant`'s quota `name`.
std::string over_quota(const std::string& tenant, const char* name, std::size_t quota, std::size_t used,
                       std::size_t bytes) {
  return "tenant '" + tenant + "' is at its " + name + " quota: its matrices take " + std::to_string(used) +
         " bytes of " + std::to_string(quota) + ", a matrix of " + std::to_string(bytes) +
         " bytes more does not fit (those in use by its jobs can not move); delete matrices, or ask for a larger quota";
}

}  // namespace

pin& pin::operator=(pin&& o) noexcept {
  if (this != &o) {
    reset();
    cache_ = o.cache_;
    entry_ = std::move(o.entry_);
    o.cache_ = nullptr;
  }
  return *this;
}

void pin::reset() {
  if (cache_ != nullptr && entry_ != nullptr) cache_->unpin(entry_);
  cache_ = nullptr;
  entry_.reset();
}

reservation& reservation::operator=(reservation&& o) noexcept {
  if (this != &o) {
    release();
    cache_ = o.cache_;
    device_ = o.device_;
    bytes_ = o.bytes_;
    o.cache_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

bool reservation::try_grow(std::size_t bytes) { return cache_->grow(device_, &bytes_, bytes); }
void reservation::shrink_to(std::size_t bytes) {
  if (cache_ != nullptr && bytes < bytes_) cache_->shrink(device_, &bytes_, bytes);
}
void reservation::take(reservation& other) {
  if (other.cache_ == nullptr || other.bytes_ == 0) return;
  if (cache_ == nullptr) {
    cache_ = other.cache_;
    device_ = other.device_;
  }
  std::lock_guard<std::mutex> lock(cache_->mutex_);
  bytes_ += other.bytes_;
  other.bytes_ = 0;
}

void reservation::release() {
  if (cache_ != nullptr && bytes_ > 0) cache_->shrink(device_, &bytes_, 0);
}

in_place& in_place::operator=(in_place&& o) noexcept {
  if (this != &o) {
    release();
    device = o.device;
    stored = std::move(o.stored);
    host = std::move(o.host);
    cache_ = o.cache_;
    entry_ = o.entry_;
    o.cache_ = nullptr;
    o.entry_ = nullptr;
  }
  return *this;
}

void in_place::release() {
  // The device copy goes before the entry may spill: the device must not
  // hold more than the cache counts.
  stored.reset();
  host.reset();
  if (cache_ != nullptr && device >= 0) cache_->release_resident(*entry_);
  cache_ = nullptr;
  entry_ = nullptr;
  device = -1;
}

matrix_cache::matrix_cache(std::vector<std::shared_ptr<spgemm::backend>> backends, std::vector<std::size_t> budgets,
                           std::size_t host_budget, int64_t default_ttl_seconds)
    : backends_(std::move(backends)), host_budget_(host_budget), default_ttl_(default_ttl_seconds) {
  devices_.resize(backends_.size());
  for (std::size_t i = 0; i < backends_.size(); ++i) devices_[i].budget = budgets[i];
}

matrix_cache::~matrix_cache() {
  {
    std::lock_guard<std::mutex> lock(sweep_mutex_);
    stop_ = true;
  }
  sweep_cv_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

std::size_t matrix_cache::largest_budget() const {
  std::size_t best = 0;
  for (const auto& d : devices_) best = std::max(best, d.budget);
  return best;
}

std::string matrix_cache::new_handle() {
  static std::mutex m;
  static std::random_device rd;  // /dev/urandom on Linux
  uint32_t words[4];
  {
    std::lock_guard<std::mutex> lock(m);
    for (auto& w : words) w = rd();
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "m-%08x%08x%08x%08x", words[0], words[1], words[2], words[3]);
  return buf;
}

void matrix_cache::note_used(int device) {
  auto& d = devices_[device];
  d.peak_used = std::max(d.peak_used, d.used());
}

void matrix_cache::count_transfer(int device, transfer direction, std::size_t bytes) {
  auto& d = devices_[device];
  const auto n = static_cast<int64_t>(bytes);
  switch (direction) {
    case transfer::to_device: d.bytes_to_device += n; break;
    case transfer::to_host: d.bytes_to_host += n; break;
    case transfer::from_peer: d.bytes_from_peer += n; break;
  }
}

void matrix_cache::note_transfer(int device, transfer direction, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  count_transfer(device, direction, bytes);
}

void matrix_cache::note_panel(int device, int delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  devices_[device].panels_in_flight += delta;
}

void matrix_cache::notify_freed() {
  if (on_freed_) on_freed_();
}

entry_info matrix_cache::snapshot(const cache_entry& e) const {
  entry_info s;
  s.handle = e.handle;
  s.name = e.name;
  s.tenant = e.tenant;
  s.info = e.info;
  s.bytes = e.bytes;
  s.on_device = e.device >= 0;
  s.device = backends_[e.device >= 0 ? e.device : e.last_device]->name();
  s.created = e.created;
  s.last_used = e.last_used;
  s.ttl_seconds = e.ttl_seconds;
  return s;
}

bool matrix_cache::make_room(int device, std::size_t bytes) {
  auto& d = devices_[device];
  if (bytes > d.budget) return false;
  if (d.used() + bytes <= d.budget) return true;
  std::vector<cache_entry*> candidates;
  for (auto& [key, e] : entries_) {
    if (e->device == device && e->active == 0) candidates.push_back(e.get());
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const cache_entry* a, const cache_entry* b) { return a->last_used_steady < b->last_used_steady; });
  for (cache_entry* e : candidates) {
    if (d.used() + bytes <= d.budget) break;
    spill(*e);
  }
  return d.used() + bytes <= d.budget;
}

bool matrix_cache::make_tenant_room(const std::string& tenant, std::size_t bytes) {
  const tenant_state& t = state_of(tenant);
  const std::size_t quota = t.limits.device_bytes;
  if (quota == 0 || t.on_devices + bytes <= quota) return true;
  if (bytes > quota) return false;
  std::vector<cache_entry*> candidates;
  for (auto it = entries_.lower_bound({tenant, ""}); it != entries_.end() && it->first.first == tenant; ++it) {
    if (it->second->device >= 0 && it->second->active == 0) candidates.push_back(it->second.get());
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const cache_entry* a, const cache_entry* b) { return a->last_used_steady < b->last_used_steady; });
  for (cache_entry* e : candidates) {
    if (t.on_devices + bytes <= quota) break;
    spill(*e);
  }
  return t.on_devices + bytes <= quota;
}

bool matrix_cache::spill(cache_entry& e) {
  const tenant_state& t = state_of(e.tenant);
  if (host_used_ + e.bytes > host_budget_) return false;
  if (t.limits.host_bytes > 0 && t.held.host + e.bytes > t.limits.host_bytes) return false;
  auto fetched = std::make_shared<const host_matrix>(backends_[e.device]->fetch(*e.stored));
  count_transfer(e.device, transfer::to_host, e.bytes);
  count_out(e);
  e.host = std::move(fetched);
  e.stored.reset();
  e.last_device = e.device;
  e.device = -1;
  count_in(e);
  return true;
}

matrix_cache::tenant_state& matrix_cache::state_of(const std::string& tenant) {
  tenant_state& t = tenants_[tenant];
  if (t.held.device.empty()) t.held.device.assign(devices_.size(), 0);
  return t;
}

matrix_cache::tenant_state& matrix_cache::tenant_of(const caller& who) {
  tenant_state& t = state_of(who.tenant);
  t.limits = who.limits;
  return t;
}

void matrix_cache::count_in(const cache_entry& e) {
  tenant_state& t = state_of(e.tenant);
  if (e.device >= 0) {
    devices_[e.device].cached += e.bytes;
    t.held.device[e.device] += e.bytes;
    t.on_devices += e.bytes;
  } else {
    host_used_ += e.bytes;
    t.held.host += e.bytes;
  }
}

void matrix_cache::count_out(const cache_entry& e) {
  tenant_state& t = state_of(e.tenant);
  if (e.device >= 0) {
    devices_[e.device].cached -= e.bytes;
    t.held.device[e.device] -= e.bytes;
    t.on_devices -= e.bytes;
  } else {
    host_used_ -= e.bytes;
    t.held.host -= e.bytes;
  }
}

matrix_cache::entry_map::iterator matrix_cache::find(const caller& who, const std::string& handle) {
  auto it = entries_.find({who.tenant, handle});
  if (it != entries_.end() || !who.admin) return it;
  // An admin names any tenant's matrix by its handle alone (handles are unique).
  return std::find_if(entries_.begin(), entries_.end(), [&](const auto& kv) { return kv.first.second == handle; });
}

void matrix_cache::add(const std::shared_ptr<cache_entry>& e) {
  entries_[{e->tenant, e->handle}] = e;
  ++state_of(e->tenant).held.matrices;
}

std::shared_ptr<cache_entry> matrix_cache::make_entry(const std::string& tenant, const spgemm::matrix_info& info,
                                                      const std::string& name, int64_t ttl_seconds,
                                                      const entry_info* promised) const {
  auto e = std::make_shared<cache_entry>();
  e->tenant = tenant;
  e->handle = promised ? promised->handle : new_handle();
  e->name = name;
  e->info = info;
  e->bytes = entry_bytes(info, name);
  e->created = e->last_used = promised ? promised->created : wall::now();
  e->last_used_steady = steady::now();
  e->ttl_seconds = std::min(ttl_seconds > 0 ? ttl_seconds : default_ttl_, max_ttl_seconds);
  return e;
}

entry_info matrix_cache::promise_stored(const spgemm::matrix_info& info, int device, const std::string& name,
                                        int64_t ttl_seconds) const {
  auto e = make_entry("", info, name, ttl_seconds);
  e->device = e->last_device = device;
  return snapshot(*e);
}

entry_info matrix_cache::insert_host(const caller& who, spgemm::any_csr& m, const std::string& name,
                                     int64_t ttl_seconds, reservation* held) {
  auto e = make_entry(who.tenant, spgemm::info_of(m), name, ttl_seconds);
  std::lock_guard<std::mutex> lock(mutex_);
  tenant_state& t = tenant_of(who);
  // Devices by room, most first.
  std::vector<int> order(devices_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return devices_[a].budget - std::min(devices_[a].budget, devices_[a].used()) >
           devices_[b].budget - std::min(devices_[b].budget, devices_[b].used());
  });
  const bool device_quota = make_tenant_room(who.tenant, e->bytes);
  for (std::size_t i = 0; device_quota && i < order.size(); ++i) {
    const int d = order[i];
    if (!make_room(d, e->bytes)) continue;
    e->stored = backends_[d]->store(m);
    count_transfer(d, transfer::to_device, e->bytes);
    e->device = e->last_device = d;
    count_in(*e);
    note_used(d);
    add(e);
    return snapshot(*e);
  }
  // Host bytes the caller holds for it count as its own.
  const bool holds = held != nullptr && held->cache_ == this && held->device_ == host;
  const std::size_t taken = holds ? std::min(held->bytes_, e->bytes) : 0;
  const bool host_quota = t.limits.host_bytes == 0 || t.held.host + e->bytes <= t.limits.host_bytes;
  if (host_quota && host_used_ - taken + e->bytes <= host_budget_) {
    e->host = std::make_shared<const host_matrix>(std::move(m));
    e->device = -1;
    e->last_device = order.empty() ? 0 : order.front();
    if (holds) {
      held->bytes_ -= taken;
      host_used_ -= taken;
    }
    count_in(*e);
    add(e);
    return snapshot(*e);
  }
  if (!host_quota) throw quota_exceeded(over_quota(who.tenant, "host_bytes", t.limits.host_bytes, t.held.host, e->bytes));
  if (!device_quota) {
    throw quota_exceeded(over_quota(who.tenant, "device_bytes", t.limits.device_bytes, t.on_devices, e->bytes));
  }
  throw spgemm::error(spgemm::error_kind::does_not_fit,
                      "no room for a matrix of " + std::to_string(e->bytes) +
                          " bytes: every device budget and the host budget are in use; delete matrices or retry later");
}

entry_info matrix_cache::insert_stored(const caller& who, reservation& res,
                                       std::shared_ptr<spgemm::stored_matrix> m, const std::string& name,
                                       int64_t ttl_seconds, const entry_info* promised) {
  auto e = make_entry(who.tenant, m->info(), name, ttl_seconds, promised);
  e->stored = std::move(m);
  e->device = e->last_device = res.device();
  std::lock_guard<std::mutex> lock(mutex_);
  const tenant_state& t = tenant_of(who);
  if (!make_tenant_room(who.tenant, e->bytes)) {
    throw quota_exceeded(over_quota(who.tenant, "device_bytes", t.limits.device_bytes, t.on_devices, e->bytes));
  }
  auto& d = devices_[res.device()];
  const std::size_t moved = std::min(res.bytes_, e->bytes);
  res.bytes_ -= moved;
  d.reserved -= moved;
  count_in(*e);
  note_used(res.device());
  add(e);
  return snapshot(*e);
}

entry_info matrix_cache::insert_host_result(const caller& who, reservation& res,
                                            std::shared_ptr<const host_matrix> m, const std::string& name,
                                            int64_t ttl_seconds, const entry_info* promised) {
  auto e = make_entry(who.tenant, m->info(), name, ttl_seconds, promised);
  e->bytes = m->bytes() + name.size();
  e->host = std::move(m);
  e->device = -1;
  std::lock_guard<std::mutex> lock(mutex_);
  const tenant_state& t = tenant_of(who);
  const bool holds = res.cache_ == this && res.device_ == host;
  const std::size_t taken = holds ? std::min(res.bytes_, e->bytes) : 0;
  if (host_used_ - taken + e->bytes > host_budget_) {
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "a result of " + std::to_string(e->bytes) + " bytes gathered in host memory held only " +
                            std::to_string(taken) + " bytes of the host budget");
  }
  if (t.limits.host_bytes > 0 && t.held.host + e->bytes > t.limits.host_bytes) {
    throw quota_exceeded(over_quota(who.tenant, "host_bytes", t.limits.host_bytes, t.held.host, e->bytes));
  }
  // The reserved bytes become the entry's.
  res.bytes_ -= taken;
  host_used_ -= taken;
  e->last_device = roomiest_locked();
  count_in(*e);
  add(e);
  return snapshot(*e);
}

bool matrix_cache::make_quota_room(const caller& who, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  tenant_of(who);
  return make_tenant_room(who.tenant, bytes);
}

pin matrix_cache::acquire(const caller& who, const std::string& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  tenant_of(who);  // its quotas, for restoring its matrices to a device
  auto it = find(who, handle);
  if (it == entries_.end()) return {};
  auto& e = it->second;
  ++e->pins;
  e->last_used = wall::now();
  e->last_used_steady = steady::now();
  return pin(this, e);
}

pin matrix_cache::find_stored(const std::weak_ptr<spgemm::stored_matrix>& m, int device) {
  if (m.expired()) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, e] : entries_) {
    if (e->stored && e->device == device && !e->stored.owner_before(m) && !m.owner_before(e->stored)) {
      ++e->pins;
      return pin(this, e);
    }
  }
  return {};
}

void matrix_cache::unpin(const std::shared_ptr<cache_entry>& e) {
  bool freed = false;
  std::vector<retired_version> retired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --e->pins;
    e->last_used = wall::now();
    e->last_used_steady = steady::now();
    if (e->pins == 0 && e->deleted) {
      free_entry(*e);
      freed = true;
    }
    retired = collect_retired();
  }
  if (freed || !retired.empty()) {
    retired.clear();
    notify_freed();
  }
}

void matrix_cache::free_entry(cache_entry& e) {
  if (e.device < 0 && !e.host) return;  // freed before
  count_out(e);
  e.stored.reset();
  e.host.reset();
  e.device = -1;
}

std::shared_ptr<spgemm::stored_matrix> matrix_cache::make_resident(cache_entry& e, int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& d = devices_[device];
  ++d.uses;
  if (e.device == device) {
    ++d.hits;
    ++e.active;
    return e.stored;
  }
  --d.uses;  // counted once it succeeds
  // In use on another device: it moves once that job is done (the job reads
  // the copy there, which would stay allocated beside the cache's count).
  if (e.device >= 0 && e.active > 0) return nullptr;
  // From the host, it adds to its tenant's bytes on the devices.
  if (e.device < 0 && !make_tenant_room(e.tenant, e.bytes)) return nullptr;
  if (!make_room(device, e.bytes)) return nullptr;
  ++d.uses;
  std::shared_ptr<spgemm::stored_matrix> stored;
  if (e.device >= 0) {  // on another device: copied over peer-to-peer, never through the host
    stored = backends_[device]->copy(*e.stored);
    count_transfer(device, transfer::from_peer, e.bytes);
  } else {
    stored = backends_[device]->store(*e.host->whole());
    count_transfer(device, transfer::to_device, e.bytes);
  }
  count_out(e);
  e.stored = std::move(stored);
  e.host.reset();
  e.device = e.last_device = device;
  count_in(e);
  ++e.active;
  note_used(device);
  return e.stored;
}

void matrix_cache::release_resident(cache_entry& e) {
  std::vector<retired_version> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --e.active;
    freed = collect_retired();
  }
  if (!freed.empty()) {
    freed.clear();
    notify_freed();
  }
}

void matrix_cache::retire(cache_entry& e) {
  if (e.stored.use_count() > 1) {
    retired_.push_back({std::move(e.stored), e.device, e.bytes});
    devices_[e.device].reserved += e.bytes;
  }
  e.stored.reset();
}

std::vector<matrix_cache::retired_version> matrix_cache::collect_retired() {
  std::vector<retired_version> out;
  for (auto it = retired_.begin(); it != retired_.end();) {
    if (it->stored.use_count() == 1) {
      devices_[it->device].reserved -= it->bytes;
      out.push_back(std::move(*it));
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void matrix_cache::write_values(cache_entry& e, const void* values) {
  std::vector<retired_version> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (e.device < 0) {  // spilled: a new host copy (a reader of the old keeps it)
      spgemm::any_csr copy = *e.host->whole();
      std::visit(
          [&](auto& m) {
            using T = typename std::decay_t<decltype(m)>::value;
            std::copy_n(static_cast<const T*>(values), m.values.size(), m.values.begin());
          },
          copy);
      e.host = std::make_shared<const host_matrix>(std::move(copy));
    } else if (e.stored.use_count() == 1) {
      backends_[e.device]->write_values(*e.stored, values);
    } else {
      // Room for the copy beside the version in use, which then counts as reserved.
      if (!make_room(e.device, e.bytes)) {
        throw spgemm::error(spgemm::error_kind::does_not_fit,
                            "no room on " + backends_[e.device]->name() + " for a copy of " + e.handle +
                                " with new values (" + std::to_string(e.bytes) +
                                " bytes) while jobs read it; retry when they are done");
      }
      auto copy = backends_[e.device]->with_values(*e.stored, values);
      retire(e);
      e.stored = std::move(copy);
      note_used(e.device);
    }
    freed = collect_retired();
  }
  if (!freed.empty()) {
    freed.clear();
    notify_freed();
  }
}

void matrix_cache::replace_stored(cache_entry& e, std::shared_ptr<spgemm::stored_matrix> m, reservation& res) {
  std::vector<retired_version> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (e.device != res.device()) {
      throw spgemm::error(spgemm::error_kind::bad_input,
                          "entry " + e.handle + " is not on " + backends_[res.device()]->name());
    }
    retire(e);
    e.stored = std::move(m);
    // The new version takes the cache's count of the entry; its own bytes leave the reservation.
    const std::size_t moved = std::min(res.bytes_, e.bytes);
    res.bytes_ -= moved;
    devices_[res.device()].reserved -= moved;
    freed = collect_retired();
  }
  freed.clear();
  notify_freed();
}

in_place matrix_cache::use_in_place(cache_entry& e) {
  in_place use;
  std::lock_guard<std::mutex> lock(mutex_);
  use.cache_ = this;
  use.entry_ = &e;
  use.device = e.device;
  if (e.device >= 0) {
    ++e.active;
    ++devices_[e.device].uses;
    ++devices_[e.device].hits;
    use.stored = e.stored;
  } else {
    use.host = e.host;
  }
  return use;
}

int matrix_cache::preferred_device(const std::vector<cache_entry*>& entries) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::size_t> bytes(devices_.size(), 0);
  for (const cache_entry* e : entries) {
    if (e->device >= 0) bytes[e->device] += e->bytes;
  }
  int best = -1;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] > 0 && (best < 0 || bytes[i] > bytes[best])) best = static_cast<int>(i);
  }
  return best;
}

int matrix_cache::roomiest_device() {
  std::lock_guard<std::mutex> lock(mutex_);
  return roomiest_locked();
}

int matrix_cache::roomiest_locked() const {
  int best = 0;
  auto room = [&](int i) {
    return static_cast<int64_t>(devices_[i].budget) - static_cast<int64_t>(devices_[i].used());
  };
  for (int i = 1; i < static_cast<int>(devices_.size()); ++i) {
    if (room(i) > room(best)) best = i;
  }
  return best;
}

void matrix_cache::locate(cache_entry& e, int* device, std::shared_ptr<spgemm::stored_matrix>* stored,
                          std::shared_ptr<const host_matrix>* host_copy) {
  std::lock_guard<std::mutex> lock(mutex_);
  *device = e.device;
  *stored = e.stored;
  *host_copy = e.host;
}

bool matrix_cache::grow(int device, std::size_t* bytes_field, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device == host) {
    if (bytes > host_budget_ - std::min(host_budget_, host_used_)) return false;
    host_used_ += bytes;
  } else {
    if (!make_room(device, bytes)) return false;
    devices_[device].reserved += bytes;
    note_used(device);
  }
  *bytes_field += bytes;
  return true;
}

void matrix_cache::shrink(int device, std::size_t* bytes_field, std::size_t to) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (device == host ? host_used_ : devices_[device].reserved) -= *bytes_field - to;
    *bytes_field = to;
  }
  notify_freed();
}

std::optional<std::size_t> matrix_cache::erase(const caller& who, const std::string& handle) {
  std::size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = find(who, handle);
    if (it == entries_.end()) return std::nullopt;
    auto e = it->second;
    entries_.erase(it);
    --state_of(e->tenant).held.matrices;
    bytes = e->bytes;
    e->deleted = true;
    if (e->pins > 0) return bytes;  // freed when the last job using it finishes
    free_entry(*e);
  }
  notify_freed();
  return bytes;
}

list_page matrix_cache::list(const caller& who, const std::optional<list_cursor>& after, std::size_t limit) {
  limit = std::max<std::size_t>(limit, 1);
  auto before = [](const wall::time_point& ca, const std::string& ha, const wall::time_point& cb,
                   const std::string& hb) { return ca < cb || (ca == cb && ha < hb); };
  auto earlier = [&](const cache_entry* a, const cache_entry* b) {
    return before(a->created, a->handle, b->created, b->handle);
  };
  // The first `limit` + 1 after the cursor, in a max-heap: a page costs
  // O(entries x log limit), whatever the page.
  std::vector<const cache_entry*> first;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, e] : entries_) {
    if (!who.sees(key.first)) continue;
    if (after && !before(after->created, after->handle, e->created, e->handle)) continue;
    if (first.size() <= limit) {
      first.push_back(e.get());
      std::push_heap(first.begin(), first.end(), earlier);
    } else if (earlier(e.get(), first.front())) {
      std::pop_heap(first.begin(), first.end(), earlier);
      first.back() = e.get();
      std::push_heap(first.begin(), first.end(), earlier);
    }
  }
  std::sort_heap(first.begin(), first.end(), earlier);
  list_page page;
  page.more = first.size() > limit;
  if (page.more) first.pop_back();
  for (const cache_entry* e : first) page.entries.push_back(snapshot(*e));
  return page;
}

std::optional<entry_info> matrix_cache::describe(const caller& who, const std::string& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = find(who, handle);
  if (it == entries_.end()) return std::nullopt;
  return snapshot(*it->second);
}

cache_stats matrix_cache::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_stats s;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const auto& d = devices_[i];
    s.devices.push_back({backends_[i]->name(), d.budget, d.cached, d.reserved, d.peak_used, d.uses, d.hits,
                         d.panels_in_flight, d.bytes_to_device, d.bytes_to_host, d.bytes_from_peer});
  }
  s.host_bytes = host_used_;
  s.host_budget = host_budget_;
  s.matrices = static_cast<int64_t>(entries_.size());
  return s;
}

tenant_stats matrix_cache::stats_of(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_of(tenant).held;
}

int matrix_cache::sweep_expired() {
  int removed = 0;
  std::vector<retired_version> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freed = collect_retired();
    const auto now = steady::now();
    for (auto it = entries_.begin(); it != entries_.end();) {
      auto& e = it->second;
      // ttl_seconds <= max_ttl_seconds: in the clock's nanoseconds it does not overflow.
      if (e->pins == 0 && e->ttl_seconds > 0 && now - e->last_used_steady > std::chrono::seconds(e->ttl_seconds)) {
        e->deleted = true;
        free_entry(*e);
        --state_of(e->tenant).held.matrices;
        it = entries_.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
  }
  if (removed > 0 || !freed.empty()) {
    freed.clear();
    notify_freed();
  }
  return removed;
}

void matrix_cache::start_sweeper(std::chrono::milliseconds period) {
  sweeper_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(sweep_mutex_);
    while (!stop_) {
      sweep_cv_.wait_for(lock, period, [this] { return stop_; });
      if (stop_) break;
      lock.unlock();
      sweep_expired();
      lock.lock();
    }
  });
}

}  // namespace spgemmd::core
