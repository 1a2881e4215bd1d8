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

outcome region_span::read(int64_t pos, void* to, int64_t bytes) const {
  if (outcome o = outside_span(pos, bytes, length); !o.ok()) return o;
  return object->read(at + pos, to, bytes);
}

outcome region_span::write(int64_t pos, const void* from, int64_t bytes) const {
  if (outcome o = outside_span(pos, bytes, length); !o.ok()) return o;
  return object->write(at + pos, from, bytes);
}

std::string region_registry::open_session(const std::string& tenant) {
  std::string id = "s-" + matrix_cache::new_handle().substr(2);
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.insert({tenant, id});
  return id;
}

std::size_t region_registry::close_session(const std::string& tenant, const std::string& session) {
  std::vector<std::shared_ptr<shm_object>> closing;  // closed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase({tenant, session});
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant;) {
    if (it->second.info.session == session) {
      closing.push_back(std::move(it->second.object));
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
  return closing.size();
}

outcome region_registry::add(const std::string& tenant, const region_info& r) {
  if (outcome o = check_region_name(r.name); !o.ok()) return o;
  if (r.offset < 0 || r.byte_size <= 0 || r.offset > INT64_MAX - r.byte_size) {
    return {status::invalid_argument, "region '" + r.name + "': offset " + std::to_string(r.offset) +
                                          " and byte_size " + std::to_string(r.byte_size) +
                                          " must be >= 0 and > 0"};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sessions_.count({tenant, r.session})) {
      return {status::not_found, "no session '" + r.session.substr(0, 64) +
                                     "': open one (Local.OpenSession) and register regions in it while it is open"};
    }
  }
  // Opened outside the lock: the file system may be slow.
  std::shared_ptr<shm_object> object;
  if (outcome o = shm_object::open(r.key, r.offset + r.byte_size, /*writable=*/true, &object); !o.ok()) return o;
  std::lock_guard<std::mutex> lock(mu_);
  if (!sessions_.count({tenant, r.session})) {
    return {status::not_found, "session '" + r.session + "' ended while region '" + r.name + "' was registered"};
  }
  if (regions_.count({tenant, r.name})) {
    return {status::already_exists, "a region named '" + r.name + "' is registered already; unregister it first"};
  }
  std::size_t of_tenant = 0;
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant; ++it) {
    ++of_tenant;
  }
  if (of_tenant >= max_per_tenant_) {
    return {status::over_limit, "already " + std::to_string(of_tenant) +
                                    " regions registered, the most the server allows a tenant; unregister some"};
  }
  regions_[{tenant, r.name}] = region{r, std::move(object)};
  return {};
}

outcome region_registry::remove(const std::string& tenant, const std::string& name) {
  std::shared_ptr<shm_object> closing;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.find({tenant, name});
  if (it == regions_.end()) return {status::not_found, "no region named '" + name.substr(0, 160) + "'"};
  closing = std::move(it->second.object);
  regions_.erase(it);
  return {};
}

std::vector<region_info> region_registry::list(const std::string& tenant) const {
  std::vector<region_info> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = regions_.lower_bound({tenant, ""}); it != regions_.end() && it->first.first == tenant; ++it) {
    out.push_back(it->second.info);
  }
  return out;
}

std::size_t region_registry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return regions_.size();
}

outcome region_registry::resolve(const std::string& tenant, const std::string& name, int64_t offset, int64_t length,
                                 int64_t alignment, const std::string& what, region_span* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.find({tenant, name});
  if (it == regions_.end()) {
    return {status::not_found, what + ": no region named '" + name.substr(0, 160) + "' (register it first)"};
  }
  const region_info& r = it->second.info;
  if (outcome o = check_range(r.byte_size, offset, length, alignment, what + " in region '" + name + "'"); !o.ok()) {
    return o;
  }
  *out = region_span{it->second.object, r.offset + offset, length};
  return {};
}

}  // namespace spgemmd::core
