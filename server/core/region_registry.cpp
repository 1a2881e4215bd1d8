#include "core/region_registry.hpp"

#include "core/matrix_cache.hpp"
#include "core/region_ref.hpp"

namespace spgemmd::core {

namespace {

outcome outside_span(int64_t pos, int64_t bytes, int64_t length) {
  if (pos < 0 || bytes < 0 || pos > length || bytes > length - pos) {
    return {status::internal, "bytes [" + std::to_string(pos) + ", +" + std::to_string(bytes) +
                                  ") lie outside a checked range of " + std::to_string(length)};
  }
  return {};
}

}  // namespace

outcome region_registry::find(const caller& who, const std::string& name, const std::string& what,
                              region_map::const_iterator* out) const {
  const std::string prefix = what.empty() ? "" : what + ": ";
  auto it = regions_.find({who.tenant, name});
  if (it == regions_.end() && who.admin) {
    // An admin names another tenant's region by its name where only one tenant has it.
    int found = 0;
    for (auto r = regions_.begin(); r != regions_.end(); ++r) {
      if (r->first.second == name && ++found == 1) it = r;
    }
    if (found > 1) {
      return {status::not_found, prefix + std::to_string(found) + " tenants have a region named '" +
                                     name.substr(0, 160) + "'; it names none of them"};
    }
  }
  if (it == regions_.end()) {
    return {status::not_found, prefix + "no region named '" + name.substr(0, 160) + "' (register it first)"};
  }
  *out = it;
  return {};
}

outcome region_span::read(int64_t pos, void* to, int64_t bytes) const {
  if (outcome o = outside_span(pos, bytes, length); !o.ok()) return o;
  return object->read(at + pos, to, bytes);
}

outcome region_span::write(int64_t pos, const void* from, int64_t bytes) const {
  if (outcome o = outside_span(pos, bytes, length); !o.ok()) return o;
  return object->write(at + pos, from, bytes);
}

std::string region_registry::open_session(const caller& who) {
  std::string id = "s-" + matrix_cache::new_handle().substr(2);
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.insert({who.tenant, id});
  return id;
}

std::size_t region_registry::close_session(const caller& who, const std::string& session) {
  const std::string& tenant = who.tenant;
  std::vector<region> closing;  // closed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase({tenant, session});
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant;) {
    if (it->second.info.session == session) {
      closing.push_back(std::move(it->second));
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
  return closing.size();
}

namespace {

outcome check_region(const region_info& r) {
  if (outcome o = check_region_name(r.name); !o.ok()) return o;
  if (r.offset < 0 || r.byte_size <= 0 || r.offset > INT64_MAX - r.byte_size) {
    return {status::invalid_argument, "region '" + r.name + "': offset " + std::to_string(r.offset) +
                                          " and byte_size " + std::to_string(r.byte_size) +
                                          " must be >= 0 and > 0"};
  }
  return {};
}

outcome no_session(const std::string& session) {
  return {status::not_found, "no session '" + session.substr(0, 64) +
                                 "': open one (Local.OpenSession) and register regions in it while it is open"};
}

}  // namespace

outcome region_registry::add(const caller& who, const region_info& r) {
  if (outcome o = check_region(r); !o.ok()) return o;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sessions_.count({who.tenant, r.session})) return no_session(r.session);
  }
  // Opened outside the lock: the file system may be slow.
  std::shared_ptr<shm_object> object;
  if (outcome o = shm_object::open(r.key, r.offset + r.byte_size, /*writable=*/true, &object, pins_); !o.ok()) {
    return o;
  }
  region added{r, std::move(object), nullptr};
  added.info.device = false;
  return insert(who, std::move(added));
}

outcome region_registry::add_device(const caller& who, const region_info& r,
                                    std::shared_ptr<const spgemm::ipc_mapping> mapping) {
  if (outcome o = check_region(r); !o.ok()) return o;
  if (static_cast<uint64_t>(r.offset + r.byte_size) > mapping->bytes) {
    return {status::invalid_argument, "region '" + r.name + "': bytes [" + std::to_string(r.offset) + ", +" +
                                          std::to_string(r.byte_size) + ") lie outside its device allocation of " +
                                          std::to_string(mapping->bytes) + " bytes"};
  }
  region added{r, nullptr, std::move(mapping)};
  added.info.device = true;
  added.info.key.clear();
  return insert(who, std::move(added));
}

outcome region_registry::insert(const caller& who, region r) {
  const std::string& tenant = who.tenant;
  std::lock_guard<std::mutex> lock(mu_);
  if (!sessions_.count({tenant, r.info.session})) return no_session(r.info.session);
  if (regions_.count({tenant, r.info.name})) {
    return {status::already_exists,
            "a region named '" + r.info.name + "' is registered already; unregister it first"};
  }
  std::size_t of_tenant = 0;
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant; ++it) {
    ++of_tenant;
  }
  if (of_tenant >= max_per_tenant_) {
    return {status::over_limit, "already " + std::to_string(of_tenant) +
                                    " regions registered, the most the server allows a tenant; unregister some"};
  }
  r.info.tenant = tenant;
  const std::string name = r.info.name;
  regions_[{tenant, name}] = std::move(r);
  return {};
}

outcome region_registry::remove(const caller& who, const std::string& name) {
  region closing;  // closed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  region_map::const_iterator it;
  if (outcome o = find(who, name, "", &it); !o.ok()) return o;
  closing = it->second;
  regions_.erase(it);
  return {};
}

std::vector<region_info> region_registry::list(const caller& who) const {
  std::vector<region_info> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, r] : regions_) {
    if (who.sees(k.first)) out.push_back(r.info);
  }
  return out;
}

std::size_t region_registry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return regions_.size();
}

outcome region_registry::resolve(const caller& who, const std::string& name, int64_t offset, int64_t length,
                                 int64_t alignment, const std::string& what, region_span* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  region_map::const_iterator it;
  if (outcome o = find(who, name, what, &it); !o.ok()) return o;
  const region_info& r = it->second.info;
  if (r.device) {
    return {status::invalid_argument, what + ": region '" + name +
                                          "' is device memory: name it where device arrays go (DeviceArrayRef)"};
  }
  if (outcome o = check_range(r.byte_size, offset, length, alignment, what + " in region '" + name + "'"); !o.ok()) {
    return o;
  }
  *out = region_span{it->second.object, r.offset + offset, length};
  return {};
}

outcome region_registry::resolve_device(const caller& who, const std::string& name, int64_t offset, int64_t length,
                                        const std::string& what, spgemm::ipc_array* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  region_map::const_iterator it;
  if (outcome o = find(who, name, what, &it); !o.ok()) return o;
  const region_info& r = it->second.info;
  if (!r.device) {
    return {status::invalid_argument, what + ": region '" + name +
                                          "' is shared memory, not device memory: name it in a RegionRef"};
  }
  if (outcome o = check_range(r.byte_size, offset, length, 1, what + " in region '" + name + "'"); !o.ok()) return o;
  *out = spgemm::ipc_array{"", static_cast<std::size_t>(r.offset + offset), static_cast<std::size_t>(length),
                           it->second.mapping};
  return {};
}

}  // namespace spgemmd::core
