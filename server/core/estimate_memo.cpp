#include "core/estimate_memo.hpp"

#include <algorithm>

namespace spgemmd::core {

std::string estimate_memo::key(const std::string& tenant, const std::string& a, const std::string& b, int device,
                               const spgemm::multiply_options& options) {
  // Every option that can change the estimate is in the key: a new field of
  // multiply_options must be added here (the size check is a reminder).
  static_assert(sizeof(spgemm::multiply_options) == 112, "multiply_options changed: extend estimate_memo::key");
  std::string k = tenant;
  for (const std::string* part : {&a, &b}) {
    k += '\0';
    k += *part;
  }
  k += '\0' + std::to_string(device) + '/' + std::string(spgemm::to_string(options.algo)) + '/' +
       (options.output_type ? std::string(spgemm::to_string(*options.output_type)) : "-") + '/' +
       spgemm::to_string(options.tuning) + '/' + spgemm::to_string(options.semiring);
  return k;
}

std::optional<estimate_memo::known> estimate_memo::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->what;
}

void estimate_memo::put(const std::string& key, const spgemm::memory_estimate& e, operands of) {
  known fresh;  // not yet run
  fresh.estimate = e;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->what = fresh;
    it->second->of = std::move(of);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.push_front(entry{key, fresh, std::move(of)});
  index_[key] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void estimate_memo::note_result(const std::string& key, const std::shared_ptr<spgemm::stored_matrix>& result) {
  const spgemm::matrix_info info = result->info();
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->what.result = info;
    it->second->what.structure = result;
  }
}

std::size_t estimate_memo::drop_gone() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t dropped = 0;
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (std::none_of(it->of.begin(), it->of.end(), [](const auto& w) { return w.expired(); })) {
      ++it;
      continue;
    }
    index_.erase(it->key);
    it = lru_.erase(it);
    ++dropped;
  }
  if (lru_.empty()) index_ = {};  // its buckets too
  return dropped;
}

std::size_t estimate_memo::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

}  // namespace spgemmd::core
