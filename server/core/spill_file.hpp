// Row blocks of kept results written to disk where the host budget has no
// room for them (--spill_dir): a product larger than host memory, computed in
// row panels and kept, lives partly in files. Each result has one unlinked
// temporary file in the spill directory (gone with the result, or with the
// process); the files' bytes count against the spill budget. A spilled block
// holds nothing in memory but its shape, and reads its rows back by ranges.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "spgemm/csr.hpp"

namespace spgemmd::core {

class spill_file;

// The server's spill directory and budget. Thread-safe.
class spill_space : public std::enable_shared_from_this<spill_space> {
 public:
  // Throws where `dir` is not a directory that takes temporary files.
  spill_space(std::string dir, std::size_t budget_bytes);

  const std::string& dir() const { return dir_; }
  std::size_t budget() const { return budget_; }
  std::size_t used() const { return used_.load(); }
  // A fresh file for one result's blocks.
  std::shared_ptr<spill_file> open();

 private:
  friend class spill_file;
  bool try_take(std::size_t bytes);
  void give_back(std::size_t bytes) { used_ -= bytes; }

  std::string dir_;
  std::size_t budget_;
  std::atomic<std::size_t> used_{0};
};

// Rows written to a spill file: their offsets, columns and values there, one
// after the other from `at`.
class spilled_rows {
 public:
  spilled_rows(std::shared_ptr<const spill_file> file, spgemm::matrix_info info, int64_t at);

  const spgemm::matrix_info& info() const { return info_; }
  // Rows [begin, end) read back, as a matrix of their own.
  spgemm::any_csr read(int64_t begin, int64_t end) const;

 private:
  std::shared_ptr<const spill_file> file_;
  spgemm::matrix_info info_;
  int64_t offsets_at_, columns_at_, values_at_;  // byte offsets in the file
};

// One result's file: blocks appended by any thread; its bytes go back to
// the space with it.
class spill_file : public std::enable_shared_from_this<spill_file> {
 public:
  spill_file(std::shared_ptr<spill_space> space, int fd) : space_(std::move(space)), fd_(fd) {}
  ~spill_file();
  spill_file(const spill_file&) = delete;
  spill_file& operator=(const spill_file&) = delete;

  // `rows` written at the end of the file; false (nothing written) where
  // the spill budget has no room for them. Throws where the write fails.
  bool write(const spgemm::any_csr& rows, std::shared_ptr<const spilled_rows>* out);
  void read(int64_t at, void* to, std::size_t bytes) const;

 private:
  std::shared_ptr<spill_space> space_;
  int fd_;
  std::mutex mu_;
  int64_t end_ = 0;  // bytes written or being written
};

}  // namespace spgemmd::core
