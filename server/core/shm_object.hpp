// A POSIX shared-memory object that a client created and named, opened by the
// server. It is read and written through its file descriptor (pread, pwrite)
// and never mapped: a client that shrinks the object meanwhile gets an error
// for its request, where a mapping would crash the server with SIGBUS. The
// copy a read makes is one the server needs anyway, since the client may
// change the bytes at any time: only what was copied is checked and used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/outcome.hpp"

namespace spgemmd::core {

class shm_object {
 public:
  // Opens the object `key` (check_object_key): invalid_argument for a bad
  // name, a file that is not a plain shared-memory object, or one smaller
  // than `min_bytes`; not_found where there is none (or the server may not
  // open it).
  static outcome open(const std::string& key, int64_t min_bytes, bool writable, std::shared_ptr<shm_object>* out);
  ~shm_object();
  shm_object(const shm_object&) = delete;
  shm_object& operator=(const shm_object&) = delete;

  const std::string& key() const { return key_; }
  // Its size now (-1 where fstat fails).
  int64_t size_now() const;
  // Copies bytes [at, at + bytes) of the object out, or into it; each
  // invalid_argument where the object no longer holds them (it shrank).
  outcome read(int64_t at, void* to, int64_t bytes) const;
  outcome write(int64_t at, const void* from, int64_t bytes) const;

 private:
  shm_object(int fd, std::string key) : fd_(fd), key_(std::move(key)) {}

  int fd_ = -1;
  std::string key_;
};

// Whether the object `key` holds exactly `token`: a client's proof that it
// shares the server's host (and its shared memory). Only the answer leaves
// the server, never the object's bytes.
outcome holds_token(const std::string& key, const std::string& token, bool* same);

}  // namespace spgemmd::core
