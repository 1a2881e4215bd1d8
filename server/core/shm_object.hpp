// A POSIX shared-memory object that a client created and named, opened by the
// server. The server's CPU reads and writes it through its file descriptor
// (pread, pwrite), never through a mapping: a client that shrinks the object
// meanwhile gets an error for its request, where a mapping would crash the
// server with SIGBUS. The copy a read makes is one the server needs anyway,
// since the client may change the bytes at any time: only what was copied is
// checked and used. A GPU's copy engines may write it through a mapping
// pinned for them (pinned_for): their copies fault no one when pages go.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/outcome.hpp"
#include "spgemm/backend.hpp"

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
  // The object mapped and pinned for `gpu`'s copy engines (backend::pin_host),
  // made on the first call and kept until the object goes: nullptr where it
  // cannot be (opened read-only, a host backend, memory the driver does not
  // pin, fewer than `min_bytes` now). Only device copies write through it.
  char* pinned_for(const std::shared_ptr<spgemm::backend>& gpu, int64_t min_bytes) const;

 private:
  shm_object(int fd, std::string key, bool writable) : fd_(fd), key_(std::move(key)), writable_(writable) {}

  int fd_ = -1;
  std::string key_;
  bool writable_ = false;
  mutable std::mutex pin_mutex_;
  mutable bool pin_tried_ = false;
  mutable char* pinned_ = nullptr;  // the mapping, pinned by pinned_by_
  mutable int64_t pinned_bytes_ = 0;
  mutable std::shared_ptr<spgemm::backend> pinned_by_;
};

// Whether the object `key` holds exactly `token`: a client's proof that it
// shares the server's host (and its shared memory). Only the answer leaves
// the server, never the object's bytes.
outcome holds_token(const std::string& key, const std::string& token, bool* same);

}  // namespace spgemmd::core
