// The matrix cache: handles -> matrices, keyed by (tenant, handle).
//
// Every backend ("device"; the CPU backend counts as one) has a byte budget
// shared by the matrices resident on it (`cached`) and the reservations of
// running jobs and of results waiting to be streamed (`reserved`); the cache
// keeps cached + reserved <= budget on every device. Under pressure the least
// recently used unpinned matrices spill to host memory (within the host
// budget) and come back on demand. Entries are pinned (refcounted) while jobs
// use them: a pinned entry never spills and a deleted pinned entry lives on,
// unlisted, until its last pin goes. A background sweep deletes entries
// unused for longer than their time to live. An entry's bytes are its
// matrix's and its name's (names are short, but a client chooses them).
//
// Every entry belongs to the tenant whose call made it; a caller finds only
// what it sees (core/caller.hpp): another tenant's handle is unknown to it.
// The cache counts each tenant's bytes on the devices and in host memory and
// keeps them within the tenant's quotas: a matrix placed on a device first
// spills that tenant's own cold matrices where its device quota needs room;
// a matrix spills only where its tenant's host quota has room; where neither
// holds a new matrix, it is refused (quota_exceeded, naming the quota).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/caller.hpp"
#include "core/host_matrix.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/csr.hpp"

namespace spgemmd::core {

using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

class matrix_cache;

// What a caller may read of an entry (a snapshot).
struct entry_info {
  std::string handle, name;
  std::string tenant;  // its owner
  spgemm::matrix_info info;
  std::size_t bytes = 0;
  bool on_device = false;
  std::string device;  // the device it lives on (or last lived on, when spilled)
  wall::time_point created, last_used;
  int64_t ttl_seconds = 0;
};

struct cache_entry {
  std::string tenant, handle, name;
  spgemm::matrix_info info;
  std::size_t bytes = 0;
  wall::time_point created;
  int64_t ttl_seconds = 0;
  // Guarded by the cache's mutex:
  int device = -1;  // where it is resident; -1: on the host
  int last_device = 0;
  std::shared_ptr<spgemm::stored_matrix> stored;    // when resident on a device
  std::shared_ptr<const host_matrix> host;          // when spilled
  int pins = 0;    // jobs and downloads holding it: it is not freed
  int active = 0;  // jobs using it on its device: it does not spill
  bool deleted = false;
  steady::time_point last_used_steady;
  wall::time_point last_used;
};

// Holds an entry in the cache (no spill, no free) while alive.
class pin {
 public:
  pin() = default;
  pin(matrix_cache* cache, std::shared_ptr<cache_entry> e) : cache_(cache), entry_(std::move(e)) {}
  pin(pin&& o) noexcept : cache_(o.cache_), entry_(std::move(o.entry_)) { o.cache_ = nullptr; }
  pin& operator=(pin&& o) noexcept;
  pin(const pin&) = delete;
  pin& operator=(const pin&) = delete;
  ~pin() { reset(); }
  void reset();
  cache_entry* operator->() const { return entry_.get(); }
  cache_entry& operator*() const { return *entry_; }
  explicit operator bool() const { return entry_ != nullptr; }
  // Expires once the entry is gone from the cache and nothing pins it.
  std::weak_ptr<const void> watch() const { return entry_; }

 private:
  matrix_cache* cache_ = nullptr;
  std::shared_ptr<cache_entry> entry_;
};

// Longest TTL an entry keeps (ten years); longer ones are cut to it.
constexpr int64_t max_ttl_seconds = int64_t{10} * 365 * 24 * 3600;

// The bytes an entry of a matrix of `info` named `name` counts in a budget.
std::size_t entry_bytes(const spgemm::matrix_info& info, const std::string& name);

// A position in the entries a caller sees, ordered by creation time and then handle:
// the last entry of a page of list().
struct list_cursor {
  wall::time_point created;
  std::string handle;
};

// A page of the entries a caller sees, and whether more follow it.
struct list_page {
  std::vector<entry_info> entries;
  bool more = false;
};

// Bytes held on a device by a job or a result in flight, or in the host
// budget (device matrix_cache::host) by an upload arriving there or a result
// gathered there (a product computed in row panels, kept); released when
// destroyed.
class reservation {
 public:
  reservation() = default;
  reservation(matrix_cache* cache, int device) : cache_(cache), device_(device) {}
  reservation(reservation&& o) noexcept { *this = std::move(o); }
  reservation& operator=(reservation&& o) noexcept;
  reservation(const reservation&) = delete;
  reservation& operator=(const reservation&) = delete;
  ~reservation() { release(); }
  // Grows by `bytes` where the device has room (spilling cold entries), or
  // the host budget has; false otherwise.
  bool try_grow(std::size_t bytes);
  // Shrinks to `bytes` (never grows).
  void shrink_to(std::size_t bytes);
  // Takes over `other`'s bytes (on the same device), which is left empty.
  void take(reservation& other);
  void release();
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  matrix_cache* cache() const { return cache_; }

 private:
  friend class matrix_cache;
  matrix_cache* cache_ = nullptr;
  int device_ = -1;
  std::size_t bytes_ = 0;
};

// Bytes a device's copies moved, by direction: host to device (uploads,
// restores, operand panels), device to host (spills, results fetched or
// streamed) and from another device into this one (peer-to-peer).
enum class transfer { to_device, to_host, from_peer };

struct device_stats {
  std::string name;
  std::size_t budget = 0, cached = 0, reserved = 0, peak_used = 0;
  int64_t uses = 0, hits = 0;
  int panels_in_flight = 0;  // row panels of products computing or waiting to leave the device
  int64_t bytes_to_device = 0, bytes_to_host = 0, bytes_from_peer = 0;
};

// An entry used where it lives, for as long as this lives: on a device it
// neither spills nor moves (as make_resident's), on the host its copy
// stays. What a product in row panels reads its operands from.
class in_place {
 public:
  in_place() = default;
  in_place(in_place&& o) noexcept { *this = std::move(o); }
  in_place& operator=(in_place&& o) noexcept;
  in_place(const in_place&) = delete;
  in_place& operator=(const in_place&) = delete;
  ~in_place() { release(); }
  void release();

  int device = -1;  // -1: on the host
  std::shared_ptr<spgemm::stored_matrix> stored;  // on `device`
  std::shared_ptr<const host_matrix> host;        // on the host

 private:
  friend class matrix_cache;
  matrix_cache* cache_ = nullptr;
  cache_entry* entry_ = nullptr;
};

// One tenant's matrices: their bytes per device and in host memory (deleted
// ones still in use by a job count until freed), and how many are listed.
struct tenant_stats {
  std::vector<std::size_t> device;
  std::size_t host = 0;
  int64_t matrices = 0;
};

struct cache_stats {
  std::vector<device_stats> devices;
  std::size_t host_bytes = 0, host_budget = 0;
  int64_t matrices = 0;
};

class matrix_cache {
 public:
  // The device of a reservation in the host budget.
  static constexpr int host = -1;

  matrix_cache(std::vector<std::shared_ptr<spgemm::backend>> backends, std::vector<std::size_t> budgets,
               std::size_t host_budget, int64_t default_ttl_seconds);
  ~matrix_cache();

  const std::vector<std::shared_ptr<spgemm::backend>>& backends() const { return backends_; }
  std::size_t budget(int device) const { return devices_[device].budget; }
  std::size_t largest_budget() const;
  std::size_t host_budget() const { return host_budget_; }
  // Where kept results past the host budget go (none: they fail there). Set before use.
  void set_spill(std::shared_ptr<spill_space> space) { spill_ = std::move(space); }
  const std::shared_ptr<spill_space>& spill() const { return spill_; }

  // A new handle: "m-" and 32 hex digits from a CSPRNG.
  static std::string new_handle();

  // Adds an uploaded matrix of `who`'s tenant: a copy onto the device with
  // the most room (spilling cold entries) where its device quota allows,
  // else `m` itself (moved from) into host memory, taking the bytes `held`
  // (a host reservation, where given) holds for it. Throws quota_exceeded
  // where its quotas hold it nowhere, spgemm::error(does_not_fit) where the
  // budgets do not.
  entry_info insert_host(const caller& who, spgemm::any_csr& m, const std::string& name, int64_t ttl_seconds,
                         reservation* held = nullptr);
  // Adds a result of `who`'s tenant stored on `res.device()`; its bytes move
  // from the reservation (which shrinks by them) to the cache. With
  // `promised` (from promise_stored), under that handle and creation time.
  // Throws quota_exceeded where the tenant's device quota can not make room
  // (its own cold matrices spilled).
  entry_info insert_stored(const caller& who, reservation& res,
                           std::shared_ptr<spgemm::stored_matrix> m, const std::string& name, int64_t ttl_seconds,
                           const entry_info* promised = nullptr);
  // What insert_stored will add for a result of `info` on `device`, its
  // handle drawn now: to announce a result before it exists. Adds nothing.
  entry_info promise_stored(const spgemm::matrix_info& info, int device, const std::string& name,
                            int64_t ttl_seconds) const;

  // Spills `who`'s tenant's cold matrices until `bytes` more of its fit its
  // device quota; false where they can not.
  bool make_quota_room(const caller& who, std::size_t bytes);

  // Adds a result of `who`'s tenant gathered in host memory (a product
  // computed in row panels) as a spilled entry; the bytes `res` (a host
  // reservation) holds for it become the entry's. Throws
  // spgemm::error(does_not_fit) where the host budget does not hold it,
  // quota_exceeded where its tenant's host quota does not. Later products
  // use it where it is, or restore it to a device. With `promised` (from
  // promise_stored), under that handle.
  entry_info insert_host_result(const caller& who, reservation& res, std::shared_ptr<const host_matrix> m,
                                const std::string& name, int64_t ttl_seconds, const entry_info* promised = nullptr);

  // Pins an entry `who` sees; an empty pin where there is no such (live) entry.
  pin acquire(const caller& who, const std::string& handle);
  // Pins the live entry whose stored matrix is `m`, resident on `device`;
  // an empty pin where there is none (a scan of the entries). `m` is weak, so
  // that looking it up keeps nothing allocated that the cache let go.
  pin find_stored(const std::weak_ptr<spgemm::stored_matrix>& m, int device);

  // Makes a pinned entry resident on `device` (restoring it from the host or
  // moving it from another device), spilling cold entries for room, and keeps
  // it there until release_resident. Counts a use (a hit when it was resident
  // there already). nullptr when there is no room now (on the device, or in
  // its tenant's device quota), or when the entry is in use on another
  // device. (Pins alone do not stop a spill: queued jobs pin their inputs,
  // and those must stay movable.)
  std::shared_ptr<spgemm::stored_matrix> make_resident(cache_entry& e, int device);
  // Ends a make_resident: the entry may spill again. (It frees nothing, so
  // the on_freed callback is not called.)
  void release_resident(cache_entry& e);
  // Uses a pinned entry where it lives now (see in_place). Counts a use of its device.
  in_place use_in_place(cache_entry& e);
  // Bytes a device's copies moved (for Status and the metrics).
  void note_transfer(int device, transfer direction, std::size_t bytes);
  // A row panel started on `device` (+1) or left it (-1).
  void note_panel(int device, int delta);
  // Device where most of these entries' bytes live, or -1.
  int preferred_device(const std::vector<cache_entry*>& entries);
  // Device with the most room (budget - used).
  int roomiest_device();
  // Where an entry lives now: its stored matrix (device >= 0) or host copy.
  void locate(cache_entry& e, int* device, std::shared_ptr<spgemm::stored_matrix>* stored,
              std::shared_ptr<const host_matrix>* host_copy);

  // New values for an entry's pattern (`values`: nnz values of its value
  // type). In place where nothing but the cache holds its stored matrix;
  // else the jobs, downloads and hierarchies that hold it keep that version
  // (counted as reserved on its device until the last lets go) and later
  // users read a copy with the new values, for which room is made (spilling
  // cold entries). Throws spgemm::error(does_not_fit) where there is none.
  void write_values(cache_entry& e, const void* values);
  // Puts `m` (same pattern and type, new values, on `res`'s device, counted
  // in `res`) in a resident entry's place, as write_values does: m's bytes
  // move from `res` to the cache, the version replaced is freed or retired.
  void replace_stored(cache_entry& e, std::shared_ptr<spgemm::stored_matrix> m, reservation& res);

  // Deletes an entry `who` sees; returns the bytes freed (now, or when its
  // last pin goes), nullopt when unknown.
  std::optional<std::size_t> erase(const caller& who, const std::string& handle);
  // The entries `who` sees in creation order, after `after` where given, at
  // most `limit` (at least 1).
  list_page list(const caller& who, const std::optional<list_cursor>& after, std::size_t limit);
  std::optional<entry_info> describe(const caller& who, const std::string& handle);
  cache_stats stats();
  tenant_stats stats_of(const std::string& tenant);

  // Deletes unpinned entries unused for longer than their TTL; returns how many.
  int sweep_expired();
  void start_sweeper(std::chrono::milliseconds period);
  // Called (without the cache lock) whenever memory was freed.
  void set_on_freed(std::function<void()> fn) { on_freed_ = std::move(fn); }

 private:
  friend class pin;
  friend class reservation;
  friend class in_place;
  struct device_state {
    std::size_t budget = 0, cached = 0, reserved = 0, peak_used = 0;
    int64_t uses = 0, hits = 0;
    int panels_in_flight = 0;
    int64_t bytes_to_device = 0, bytes_to_host = 0, bytes_from_peer = 0;
    std::size_t used() const { return cached + reserved; }
  };
  struct tenant_state {
    quotas limits;  // as its latest call gave them
    tenant_stats held;
    std::size_t on_devices = 0;  // the sum of held.device
  };
  using entry_map = std::map<std::pair<std::string, std::string>, std::shared_ptr<cache_entry>>;

  void unpin(const std::shared_ptr<cache_entry>& e);
  bool grow(int device, std::size_t* bytes_field, std::size_t bytes);
  void shrink(int device, std::size_t* bytes_field, std::size_t to);
  // Spills unpinned LRU entries of `device` until `bytes` more fit. Lock held.
  bool make_room(int device, std::size_t bytes);
  // Spills `tenant`'s own unpinned LRU entries, from any device, until `bytes`
  // more of its matrices fit its device quota. Lock held.
  bool make_tenant_room(const std::string& tenant, std::size_t bytes);
  // Moves `e` from its device to host memory where the host budget and its
  // tenant's host quota have room. Lock held.
  bool spill(cache_entry& e);
  // The state of `tenant` (made where new). Lock held.
  tenant_state& state_of(const std::string& tenant);
  // The state of `who`'s tenant, its quotas updated from `who`. Lock held.
  tenant_state& tenant_of(const caller& who);
  // Adds `e`'s bytes to, or takes them from, where it lives (its device or
  // the host) and its tenant's count. Lock held.
  void count_in(const cache_entry& e);
  void count_out(const cache_entry& e);
  // The listed entry `handle` that `who` sees, or end(). Lock held.
  entry_map::iterator find(const caller& who, const std::string& handle);
  // Adds a new entry to the listing. Lock held.
  void add(const std::shared_ptr<cache_entry>& e);
  int roomiest_locked() const;
  void free_entry(cache_entry& e);  // lock held
  // Versions of stored matrices replaced while still held elsewhere: their
  // bytes stay reserved on their device until only the cache holds them.
  struct retired_version {
    std::shared_ptr<spgemm::stored_matrix> stored;
    int device;
    std::size_t bytes;
  };
  // Retires e's current version (lock held).
  void retire(cache_entry& e);
  // Those no one else holds any more, out of the list and their bytes
  // unreserved (lock held): the caller drops them after unlocking.
  std::vector<retired_version> collect_retired();
  void note_used(int device);       // lock held
  void count_transfer(int device, transfer direction, std::size_t bytes);  // lock held
  entry_info snapshot(const cache_entry& e) const;
  // A new entry, not yet added: its handle (drawn now, unless given), times and TTL.
  std::shared_ptr<cache_entry> make_entry(const std::string& tenant, const spgemm::matrix_info& info,
                                          const std::string& name, int64_t ttl_seconds,
                                          const entry_info* promised = nullptr) const;
  void notify_freed();

  std::vector<std::shared_ptr<spgemm::backend>> backends_;
  std::vector<device_state> devices_;
  std::size_t host_budget_ = 0, host_used_ = 0;
  int64_t default_ttl_ = 0;
  std::mutex mutex_;
  entry_map entries_;
  std::map<std::string, tenant_state> tenants_;
  std::vector<retired_version> retired_;
  std::function<void()> on_freed_;
  std::shared_ptr<spill_space> spill_;

  std::mutex sweep_mutex_;
  std::condition_variable sweep_cv_;
  bool stop_ = false;
  std::thread sweeper_;
};

}  // namespace spgemmd::core
