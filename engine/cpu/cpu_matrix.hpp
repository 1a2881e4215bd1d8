// A matrix stored by the CPU backend: host arrays, their bytes counted on the
// backend's counter for as long as the matrix lives. Shared by the backend
// (cpu_backend.cpp) and its algebraic multigrid (cpu_amg.cpp).
#pragma once

#include <memory>

#include "cpu/host_memory.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::cpu {

// Holds `bytes` on the counter for as long as it lives.
class counted_bytes {
 public:
  counted_bytes(std::shared_ptr<byte_counter> counter, std::size_t bytes) : counter_(std::move(counter)), bytes_(bytes) {
    counter_->add(bytes_);
  }
  ~counted_bytes() { counter_->remove(bytes_); }
  counted_bytes(const counted_bytes&) = delete;
  counted_bytes& operator=(const counted_bytes&) = delete;

 private:
  std::shared_ptr<byte_counter> counter_;
  std::size_t bytes_;
};

class cpu_matrix final : public stored_matrix {
 public:
  cpu_matrix(any_csr m, std::shared_ptr<byte_counter> counter)
      : matrix_(std::move(m)), held_(std::move(counter), info_of(matrix_).bytes()) {}
  matrix_info info() const override { return info_of(matrix_); }
  const any_csr& matrix() const { return matrix_; }
  // Its values, to overwrite in place (backend::write_values): the pattern stays.
  any_csr& matrix_for_values() { return matrix_; }

 private:
  any_csr matrix_;
  counted_bytes held_;
};

inline const cpu_matrix& as_cpu(const stored_matrix& m) {
  const auto* cpu = dynamic_cast<const cpu_matrix*>(&m);
  if (!cpu) throw_bad_input("the matrix is stored on another backend");
  return *cpu;
}

}  // namespace spgemm::cpu
