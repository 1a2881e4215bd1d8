#include "core/amg_hierarchies.hpp"


#include "spgemm/errors.hpp"

namespace spgemmd::core {

resident_pin::resident_pin(matrix_cache& cache, pin p, int device) : cache_(cache), pin_(std::move(p)) {
  if (!cache_.make_resident(*pin_, device)) {
    throw spgemm::error(spgemm::error_kind::does_not_fit, "no room to keep " + pin_->handle + " on " +
                                                              cache_.backends()[static_cast<std::size_t>(device)]->name());
  }
}

resident_pin::~resident_pin() { cache_.release_resident(*pin_); }

amg_hierarchies::~amg_hierarchies() {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.clear();
}

std::string amg_hierarchies::new_handle() {
  std::string h = matrix_cache::new_handle();  // "m-" and 32 hex digits from the CSPRNG
  h[0] = 'h';
  return h;
}

void amg_hierarchies::add(std::shared_ptr<amg_record> r) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_[{r->tenant, r->handle}] = std::move(r);
}

std::shared_ptr<amg_record> amg_hierarchies::find(const std::string& tenant, const std::string& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = records_.find({tenant, handle});
  return it == records_.end() ? nullptr : it->second;
}

bool amg_hierarchies::erase(const std::string& tenant, const std::string& handle) {
  std::shared_ptr<amg_record> r;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = records_.find({tenant, handle});
    if (it == records_.end()) return false;
    r = std::move(it->second);
    records_.erase(it);
  }
  std::lock_guard<std::mutex> lock(r->mutex);
  for (std::size_t k = 0; k < r->levels.size(); ++k) {
    const amg_level_entries& l = r->levels[k];
    for (const auto* e : {&l.a, &l.p, &l.r}) {
      if (*e && !(k == 0 && e == &l.a)) cache_.erase(r->owner, (*e)->entry().handle);  // A_0 is the caller's
    }
  }
  return true;
}

std::vector<std::shared_ptr<amg_record>> amg_hierarchies::list(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<amg_record>> out;
  for (const auto& [key, r] : records_) {
    if (key.first == tenant) out.push_back(r);
  }
  return out;
}

}  // namespace spgemmd::core
