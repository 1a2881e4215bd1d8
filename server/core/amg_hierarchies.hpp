// Multigrid hierarchies kept on the server, by (tenant, handle): handles
// "h-" and 32 hex digits. A hierarchy's matrices are cache entries, each
// level's A, P and R listed and downloadable like any matrix (A_0 is the
// caller's); the engine's hierarchy holds their device copies, so while it
// lives they stay resident and in use on its device (they never spill), and
// what it holds besides (inverse diagonals, the coarsest level's inverse,
// what a re-setup reuses) is reserved there. Deleting a hierarchy deletes
// its levels' matrices (not A_0); a job that still runs on it keeps what it
// uses until it ends.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/matrix_cache.hpp"
#include "spgemm/amg.hpp"

namespace spgemmd::core {

// A pin that also keeps its entry resident and in use on a device.
class resident_pin {
 public:
  // Throws spgemm::error(does_not_fit) where the entry can not be made resident there.
  resident_pin(matrix_cache& cache, pin p, int device);
  ~resident_pin();
  resident_pin(const resident_pin&) = delete;
  resident_pin& operator=(const resident_pin&) = delete;
  cache_entry& entry() const { return *pin_; }

 private:
  matrix_cache& cache_;
  pin pin_;
};

struct amg_level_entries {
  std::shared_ptr<resident_pin> a, p, r;  // p and r empty on the coarsest level
};

struct amg_record {
  caller owner;  // whose matrices its levels are
  std::string tenant, handle, name;
  int device = -1;
  spgemm::amg::setup_options options;
  std::vector<amg_level_entries> levels;  // levels[0].a: the caller's A_0
  std::shared_ptr<spgemm::amg::hierarchy> hierarchy;
  reservation own;  // hierarchy->own_bytes() on `device`
  std::atomic<bool> resetting{false};  // one re-setup at a time
  std::mutex mutex;  // guards hierarchy and levels while a re-setup swaps them
};

class amg_hierarchies {
 public:
  explicit amg_hierarchies(matrix_cache& cache) : cache_(cache) {}
  ~amg_hierarchies();

  // A new handle: "h-" and 32 hex digits.
  static std::string new_handle();

  void add(std::shared_ptr<amg_record> r);
  std::shared_ptr<amg_record> find(const std::string& tenant, const std::string& handle);
  // Unlists it and deletes its levels' matrices; false where unknown.
  bool erase(const std::string& tenant, const std::string& handle);
  std::vector<std::shared_ptr<amg_record>> list(const std::string& tenant);

  matrix_cache& cache() { return cache_; }

 private:
  matrix_cache& cache_;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<amg_record>> records_;
};

}  // namespace spgemmd::core
