// Estimates of products already sized, by what they were sized for.
//
// A stored matrix never changes and a handle is never reused, and the engine
// sizes a product deterministically (its multiply must stay within what
// estimate_multiply said, without being told). So the product of the same two
// stored matrices on the same device with the same options has the estimate
// it had before, and a repeated product skips the sizing pass: on a GPU,
// kernels over both operands and a synchronisation, a good part of a small
// product's round trip. It also remembers the size of what the product gave
// last time, so that a kept result can be announced while it runs, and the
// result itself while something else (the cache) keeps it: stored matrices
// change only in value, so the same product has its structure, and runs its
// numeric phase alone on it (backend::multiply_numeric).
// Bounded; the least recently used entry goes first, and an entry whose
// operands are gone (deleted, expired) is dropped when the server is quiet
// (drop_gone): it can never be asked for again.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spgemm/backend.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

class estimate_memo {
 public:
  explicit estimate_memo(std::size_t capacity) : capacity_(capacity) {}

  // The key of A * B on `device`, for the stored matrices (tenant, a) and (tenant, b).
  static std::string key(const std::string& tenant, const std::string& a, const std::string& b, int device,
                         const spgemm::multiply_options& options);

  struct known {
    spgemm::memory_estimate estimate;
    std::optional<spgemm::matrix_info> result;  // what it gave then
    std::weak_ptr<spgemm::stored_matrix> structure;  // and the matrix, while it lives
  };

  // What an entry was sized for (the stored operands), watched without being kept alive.
  using operands = std::vector<std::weak_ptr<const void>>;

  std::optional<known> find(const std::string& key);
  void put(const std::string& key, const spgemm::memory_estimate& e, operands of);
  // Notes what the product of `key` gave (nothing where the key is gone).
  void note_result(const std::string& key, const std::shared_ptr<spgemm::stored_matrix>& result);
  // Drops the entries whose operands are gone; returns how many.
  std::size_t drop_gone();
  std::size_t size();

 private:
  struct entry {
    std::string key;
    known what;
    operands of;
  };
  std::size_t capacity_;
  std::mutex mutex_;
  std::list<entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<entry>::iterator> index_;
};

}  // namespace spgemmd::core
