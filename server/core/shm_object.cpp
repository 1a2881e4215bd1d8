#include "core/shm_object.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <vector>

#include "core/region_ref.hpp"

namespace spgemmd::core {

namespace {

std::string quoted(const std::string& key) { return "shared-memory object '" + key + "'"; }

// Transfers of this many bytes and more go in pieces, on threads of their own:
// one thread copies a few GB/s between the object's pages and ours, memory
// moves several times that.
constexpr int64_t parallel_bytes = 16 << 20;
constexpr int64_t max_pieces = 4;

// io(from, n) over [0, bytes): in one piece, or in up to max_pieces at once.
// The first failure.
template <typename F>
outcome in_pieces(int64_t bytes, const F& io) {
  if (bytes < parallel_bytes) return io(0, bytes);
  const int64_t step = (bytes + max_pieces - 1) / max_pieces;
  std::vector<std::future<outcome>> others;
  for (int64_t from = step; from < bytes; from += step) {
    others.push_back(std::async(std::launch::async, [&io, from, n = std::min(step, bytes - from)] { return io(from, n); }));
  }
  outcome result = io(0, step);
  for (auto& f : others) {
    outcome o = f.get();
    if (result.ok()) result = std::move(o);
  }
  return result;
}

outcome shrank(const std::string& key, int64_t size, int64_t needed) {
  return {status::invalid_argument, quoted(key) + " ends at " + std::to_string(size) + " bytes, before byte " +
                                        std::to_string(needed) + " of its region: it shrank after it was registered"};
}

}  // namespace

bool pin_budget::take(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > left_) return false;
  left_ -= bytes;
  return true;
}

void pin_budget::give(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  left_ += bytes;
}

outcome shm_object::open(const std::string& key, int64_t min_bytes, bool writable, std::shared_ptr<shm_object>* out,
                         std::shared_ptr<pin_budget> pins) {
  if (outcome named = check_object_key(key); !named.ok()) return named;
  // shm_open adds O_NOFOLLOW and O_CLOEXEC; the name has no '/' past the
  // first, so it stays within the shared-memory file system.
  const int fd = shm_open(key.c_str(), writable ? O_RDWR : O_RDONLY, 0);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT || e == EACCES || e == EPERM || e == ELOOP) {
      return {status::not_found, "no " + quoted(key) + " that the server may open" +
                                     (writable ? " for reading and writing" : "") + " (" + std::strerror(e) + ")"};
    }
    return {status::invalid_argument, "cannot open " + quoted(key) + ": " + std::strerror(e)};
  }
  auto object = std::shared_ptr<shm_object>(new shm_object(fd, key, writable, min_bytes, std::move(pins)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return {status::invalid_argument, quoted(key) + " is not a plain shared-memory object"};
  }
  if (st.st_size < min_bytes) {
    return {status::invalid_argument, quoted(key) + " holds " + std::to_string(st.st_size) + " bytes, fewer than the " +
                                          std::to_string(min_bytes) + " declared"};
  }
  *out = std::move(object);
  return {};
}

shm_object::~shm_object() {
  if (pinned_ != nullptr) {
    pinned_by_->unpin_host(pinned_);
    ::munmap(pinned_, static_cast<std::size_t>(pin_bytes_));
    pins_->give(pin_bytes_);
  }
  if (fd_ >= 0) ::close(fd_);
}

int64_t shm_object::size_now() const {
  struct stat st {};
  return fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

outcome shm_object::read(int64_t at, void* to, int64_t bytes) const {
  return in_pieces(bytes, [&](int64_t from, int64_t n) -> outcome {
    auto* p = static_cast<char*>(to) + from;
    for (int64_t pos = at + from, end = pos + n; pos < end;) {
      const ssize_t got = ::pread(fd_, p, static_cast<std::size_t>(end - pos), static_cast<off_t>(pos));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return shrank(key_, size_now(), end);
      p += got;
      pos += got;
    }
    return {};
  });
}

outcome shm_object::write(int64_t at, const void* from, int64_t bytes) const {
  // Writing past the end would grow the object: refuse one that shrank.
  if (const int64_t size = size_now(); size < at + bytes) return shrank(key_, size, at + bytes);
  return in_pieces(bytes, [&](int64_t first, int64_t n) -> outcome {
    const auto* p = static_cast<const char*>(from) + first;
    for (int64_t pos = at + first, end = pos + n; pos < end;) {
      const ssize_t put = ::pwrite(fd_, p, static_cast<std::size_t>(end - pos), static_cast<off_t>(pos));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return {status::invalid_argument, "cannot write " + quoted(key_) + ": " + std::strerror(errno)};
      p += put;
      pos += put;
    }
    return {};
  });
}

char* shm_object::pinned_for(const std::shared_ptr<spgemm::backend>& gpu, int64_t min_bytes) const {
  std::lock_guard<std::mutex> lock(pin_mutex_);
  if (pinned_ == nullptr) {
    if (!pins_ || !writable_ || pin_refused_ || pin_bytes_ <= 0 || size_now() < pin_bytes_) return nullptr;
    if (!pins_->take(pin_bytes_)) return nullptr;  // asked again once others give some back
    const auto bytes = static_cast<std::size_t>(pin_bytes_);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p != MAP_FAILED && gpu->pin_host(p, bytes)) {
      pinned_ = static_cast<char*>(p);
      pinned_by_ = gpu;
    } else {
      if (p != MAP_FAILED) ::munmap(p, bytes);
      pins_->give(pin_bytes_);
      pin_refused_ = true;
      return nullptr;
    }
  }
  return pin_bytes_ >= min_bytes && size_now() >= min_bytes ? pinned_ : nullptr;
}

outcome holds_token(const std::string& key, const std::string& token, bool* same) {
  *same = false;
  if (token.size() < 16 || token.size() > 64) {
    return {status::invalid_argument, "the token must have 16 to 64 bytes, not " + std::to_string(token.size())};
  }
  std::shared_ptr<shm_object> object;
  const auto bytes = static_cast<int64_t>(token.size());
  if (outcome opened = shm_object::open(key, bytes, /*writable=*/false, &object); !opened.ok()) return opened;
  // Exactly the token's size: the answer says nothing of larger objects.
  if (object->size_now() != bytes) {
    return {status::invalid_argument, quoted(key) + " must hold exactly the token's " + std::to_string(bytes) + " bytes"};
  }
  std::string read_back(token.size(), '\0');
  if (outcome r = object->read(0, read_back.data(), bytes); !r.ok()) return r;
  *same = read_back == token;
  return {};
}

}  // namespace spgemmd::core
