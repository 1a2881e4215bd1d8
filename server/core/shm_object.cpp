#include "core/shm_object.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/region_ref.hpp"

namespace spgemmd::core {

namespace {

std::string quoted(const std::string& key) { return "shared-memory object '" + key + "'"; }

outcome shrank(const std::string& key, int64_t size, int64_t needed) {
  return {status::invalid_argument, quoted(key) + " ends at " + std::to_string(size) + " bytes, before byte " +
                                        std::to_string(needed) + " of its region: it shrank after it was registered"};
}

}  // namespace

outcome shm_object::open(const std::string& key, int64_t min_bytes, bool writable, std::shared_ptr<shm_object>* out) {
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
  auto object = std::shared_ptr<shm_object>(new shm_object(fd, key));
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
  if (fd_ >= 0) ::close(fd_);
}

int64_t shm_object::size_now() const {
  struct stat st {};
  return fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

outcome shm_object::read(int64_t at, void* to, int64_t bytes) const {
  auto* p = static_cast<char*>(to);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, static_cast<std::size_t>(bytes), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return shrank(key_, size_now(), at + bytes);
    p += n;
    at += n;
    bytes -= n;
  }
  return {};
}

outcome shm_object::write(int64_t at, const void* from, int64_t bytes) const {
  // Writing past the end would grow the object: refuse one that shrank.
  if (const int64_t size = size_now(); size < at + bytes) return shrank(key_, size, at + bytes);
  const auto* p = static_cast<const char*>(from);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, static_cast<std::size_t>(bytes), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {status::invalid_argument, "cannot write " + quoted(key_) + ": " + std::strerror(errno)};
    p += n;
    at += n;
    bytes -= n;
  }
  return {};
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
