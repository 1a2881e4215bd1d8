// Fuzzes the reading of a matrix out of a client's shared-memory region
// (rpc/region_upload: UploadFromRegion, and a product's *_region operands) on
// the real core, region registry and CPU backend, with a real POSIX
// shared-memory object of 64 KiB registered as region "r". The input is two
// bytes of length and a RegionUploadRequest (its references, well formed or
// not; one that names no region names "r"), then the region's bytes. Whatever
// comes, nothing may crash or read outside the region, and once the call ends
// it holds nothing: no reservation is left, and the only bytes cached are
// those of the matrix it stored.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "auth/authenticator.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "ops/config.hpp"
#include "ops/service_metrics.hpp"
#include "rpc/region_upload.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/backend.hpp"

namespace {

using namespace spgemmd;
namespace v1 = spgemm::v1;

constexpr std::size_t region_bytes = 64 << 10;

// A small server's state (64 MiB on its one device, 16 MiB of host budget)
// with the object registered as region "r" of the caller's tenant.
struct small_server {
  std::unique_ptr<core::matrix_cache> cache;
  std::unique_ptr<core::scheduler> sched;
  std::unique_ptr<service_metrics> metrics;
  auth::authenticator auth;
  config cfg;
  std::unique_ptr<service_state> state;
  std::string key = "/spgemm-fuzz-" + std::to_string(getpid());
  unsigned char* bytes = nullptr;

  small_server() {
    cache = std::make_unique<core::matrix_cache>(std::vector<std::shared_ptr<spgemm::backend>>{spgemm::make_cpu_backend(1)},
                                                 std::vector<std::size_t>{64 << 20}, 16 << 20, 0);
    sched = std::make_unique<core::scheduler>(*cache, 8, 1);
    metrics = std::make_unique<service_metrics>(*cache, *sched);
    state = std::make_unique<service_state>(*cache, *sched, *metrics, auth, cfg, "fuzz");
    const int fd = shm_open(key.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, region_bytes) != 0) __builtin_trap();
    void* p = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) __builtin_trap();
    bytes = static_cast<unsigned char*>(p);
    core::region_info r;
    r.session = state->regions.open_session(core::caller{});
    r.name = "r";
    r.key = key;
    r.byte_size = region_bytes;
    if (!state->regions.add(core::caller{}, r).ok()) __builtin_trap();
  }
  ~small_server() { shm_unlink(key.c_str()); }
};

void name_the_region(v1::RegionRef* ref) {
  if (ref->region().empty()) ref->set_region("r");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static small_server server;
  if (size < 2) return 0;
  const std::size_t n = std::min<std::size_t>(data[0] | std::size_t{data[1]} << 8, size - 2);
  v1::RegionUploadRequest request;
  if (!request.ParseFromArray(data + 2, static_cast<int>(n))) return 0;
  name_the_region(request.mutable_row_offsets());
  name_the_region(request.mutable_col_indices());
  name_the_region(request.mutable_values());
  const std::size_t content = std::min(region_bytes, size - 2 - n);
  std::memcpy(server.bytes, data + 2 + n, content);
  std::memset(server.bytes + content, 0, region_bytes - content);

  v1::MatrixInfo stored;
  const grpc::Status status = upload_from_region(*server.state, core::caller{}, request, &stored);

  const core::cache_stats s = server.cache->stats();
  const std::size_t kept = status.ok() ? static_cast<std::size_t>(stored.bytes()) : 0;
  if (s.devices[0].reserved != 0 || s.devices[0].cached + s.host_bytes != kept) __builtin_trap();
  if (status.ok() && !server.cache->erase(core::caller{}, stored.handle())) __builtin_trap();
  return 0;
}
