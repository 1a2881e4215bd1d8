// A real POSIX shared-memory object for the region tests, as a client
// creates one.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace spgemmd::testing {

// A POSIX shared-memory object of `bytes` bytes holding 0, 1, 2, ...;
// unlinked when the test ends.
class shm_file {
 public:
  explicit shm_file(int64_t bytes, mode_t mode = 0600) {
    static int counter = 0;
    key_ = "/spgemmd-core-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const int fd = shm_open(key_.c_str(), O_CREAT | O_EXCL | O_RDWR, mode);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    std::vector<unsigned char> bytes_of(static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < bytes_of.size(); ++i) bytes_of[i] = static_cast<unsigned char>(i);
    EXPECT_EQ(::write(fd, bytes_of.data(), bytes_of.size()), static_cast<ssize_t>(bytes_of.size()));
    ::close(fd);
  }
  ~shm_file() { shm_unlink(key_.c_str()); }
  const std::string& key() const { return key_; }
  // Bytes [at, at + n) as the client sees them.
  std::vector<char> read(int64_t at, int64_t n) const {
    std::vector<char> out(static_cast<std::size_t>(n));
    const int fd = shm_open(key_.c_str(), O_RDONLY, 0);
    EXPECT_EQ(pread(fd, out.data(), out.size(), at), static_cast<ssize_t>(out.size()));
    ::close(fd);
    return out;
  }
  void resize(int64_t bytes) const {
    const int fd = shm_open(key_.c_str(), O_RDWR, 0);
    EXPECT_EQ(ftruncate(fd, bytes), 0);
    ::close(fd);
  }

 private:
  std::string key_;
};

}  // namespace spgemmd::testing
