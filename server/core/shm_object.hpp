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

// Host memory pinned for GPU copies into and out of regions, all tenants
// together: an object is pinned only where its bytes fit what is left.
class pin_budget {
 public:
  explicit pin_budget(int64_t bytes) : left_(bytes) {}
  bool take(int64_t bytes);
  void give(int64_t bytes);

 private:
  mutable std::mutex mu_;
  int64_t left_;
};

class shm_object {
 public:
  // Opens the object `key` (check_object_key): invalid_argument for a bad
  // name, a file that is not a plain shared-memory object, or one smaller
  // than `min_bytes`; not_found where there is none (or the server may not
  // open it). With `pins`, its first `min_bytes` may be pinned within them.
  static outcome open(const std::string& key, int64_t min_bytes, bool writable, std::shared_ptr<shm_object>* out,
                      std::shared_ptr<pin_budget> pins = nullptr);
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
  // The object's first bytes (those open() was given) mapped and pinned for
  // `gpu`'s copy engines (backend::pin_host), made on the first call that
  // the budget allows and kept until the object goes: nullptr where they
  // cannot be (no budget or too little left, opened read-only, a host
  // backend, memory the driver does not pin, fewer than `min_bytes` in the
  // mapping or the object now). Only device copies go through it.
  char* pinned_for(const std::shared_ptr<spgemm::backend>& gpu, int64_t min_bytes) const;

 private:
  shm_object(int fd, std::string key, bool writable, int64_t pin_bytes, std::shared_ptr<pin_budget> pins)
      : fd_(fd), key_(std::move(key)), writable_(writable), pin_bytes_(pin_bytes), pins_(std::move(pins)) {}

  int fd_ = -1;
  std::string key_;
  bool writable_ = false;
  int64_t pin_bytes_ = 0;
  std::shared_ptr<pin_budget> pins_;
  mutable std::mutex pin_mutex_;
  mutable bool pin_refused_ = false;  // by the driver or the backend: not asked again
  mutable char* pinned_ = nullptr;    // pin_bytes_ of the object, pinned by pinned_by_
  mutable std::shared_ptr<spgemm::backend> pinned_by_;
};

// Whether the object `key` holds exactly `token`: a client's proof that it
// shares the server's host (and its shared memory). Only the answer leaves
// the server, never the object's bytes.
outcome holds_token(const std::string& key, const std::string& token, bool* same);

}  // namespace spgemmd::core
