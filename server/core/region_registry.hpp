// The regions clients on the server's host registered: per tenant, by name,
// each in a session that it ends with. A caller finds only the regions it
// sees (core/caller.hpp): another tenant's region is, to it, a region that
// does not exist. A region is a byte range of a POSIX shared-memory object
// the client created, or of a CUDA device allocation of the client's (a
// device region, by its IPC handle: opened once when registered instead of
// at every call that names it); the server opens the object or allocation
// when the region is registered (checking that it holds the range) and reads
// or writes only within the ranges that references name and the checks of
// region_ref.hpp let through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/caller.hpp"
#include "core/outcome.hpp"
#include "core/shm_object.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

struct region_info {
  std::string name, key, session;
  int64_t offset = 0, byte_size = 0;  // the range of the object that is the region
  std::string tenant;                 // its owner: the tenant of the caller that registered it
  bool device = false;                // a device region (no key)
};

// Bytes [at, at + length) of an opened object: a reference, resolved and
// checked. Keeps the object open (an unregistered region stays readable by
// the requests that resolved it before).
struct region_span {
  std::shared_ptr<const shm_object> object;
  int64_t at = 0, length = 0;

  // Bytes [pos, pos + bytes) of the span, out or in: internal where that
  // leaves the span (the callers' sizes are checked against it first).
  outcome read(int64_t pos, void* to, int64_t bytes) const;
  outcome write(int64_t pos, const void* from, int64_t bytes) const;
};

class region_registry {
 public:
  // Regions are pinned for GPU copies (shm_object::pinned_for) within
  // `pinned_bytes` at once, all tenants together; 0: never.
  explicit region_registry(std::size_t max_regions_per_tenant, int64_t pinned_bytes = 0)
      : max_per_tenant_(max_regions_per_tenant), pins_(std::make_shared<pin_budget>(pinned_bytes)) {}

  // A new session of `who`'s tenant: "s-" and 32 hex digits from a CSPRNG.
  std::string open_session(const caller& who);
  // Ends a session of `who`'s tenant and unregisters its regions; returns how many.
  std::size_t close_session(const caller& who, const std::string& session);

  // Registers `r` in its session, which must be one of `who`'s tenant's (the
  // region is that tenant's): checks the names, opens the object and checks
  // that it holds the range. not_found for an unknown session, already_exists
  // for a name in use in the tenant, over_limit past the tenant's allowance.
  outcome add(const caller& who, const region_info& r);
  // The same for a device region: `mapping` is the client's allocation,
  // opened (backend::open_ipc), that must hold the range.
  outcome add_device(const caller& who, const region_info& r, std::shared_ptr<const spgemm::ipc_mapping> mapping);
  // Unregisters a region `who` sees; not_found where there is none.
  outcome remove(const caller& who, const std::string& name);
  // The regions `who` sees (an admin: every tenant's), by tenant and name.
  std::vector<region_info> list(const caller& who) const;
  // Regions of all tenants (metrics).
  std::size_t size() const;

  // The bytes that [offset, offset + length) of region `name` (one `who`
  // sees) are, checked with check_range; `what` names the reference in messages.
  outcome resolve(const caller& who, const std::string& name, int64_t offset, int64_t length, int64_t alignment,
                  const std::string& what, region_span* out) const;
  // The same of a device region, as the engine takes device memory: the
  // region's mapping and where the range lies in it.
  outcome resolve_device(const caller& who, const std::string& name, int64_t offset, int64_t length,
                         const std::string& what, spgemm::ipc_array* out) const;

 private:
  struct region {
    region_info info;
    std::shared_ptr<shm_object> object;                 // a shared-memory region's
    std::shared_ptr<const spgemm::ipc_mapping> mapping;  // a device region's
  };
  using key = std::pair<std::string, std::string>;  // (tenant, name or session)
  using region_map = std::map<key, region>;

  // The region `name` that `who` sees: its tenant's; for an admin, else the
  // one region of that name among all tenants' (names are the clients', not
  // unique across tenants). not_found where there is none, or several. Lock held.
  outcome find(const caller& who, const std::string& name, const std::string& what,
               region_map::const_iterator* out) const;
  // Checks `r`'s name and range, then adds it as `who`'s tenant's in its session.
  outcome insert(const caller& who, region r);

  const std::size_t max_per_tenant_;
  const std::shared_ptr<pin_budget> pins_;
  mutable std::mutex mu_;
  region_map regions_;
  std::set<key> sessions_;
};

}  // namespace spgemmd::core
