// Fuzzes an Upload call's request handling without a network (rpc/upload_call:
// what upload_reactor hands each received message to) on the real core and
// the CPU backend: the input is a sequence of messages, each two bytes of
// length and its bytes (an UploadPart, well formed or not). Whatever comes,
// nothing may crash, and once the call ends it holds nothing: no reservation
// is left, and the only bytes cached are those of the matrix it stored.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "rpc/spare_arrays.hpp"
#include "rpc/upload_call.hpp"
#include "spgemm/backend.hpp"

namespace {

using namespace spgemmd;

// The core of a small server: 64 MiB on its one device, 16 MiB of host budget.
struct small_server {
  std::unique_ptr<core::matrix_cache> cache;
  std::unique_ptr<core::scheduler> sched;
  spare_arrays spares{8 << 20};

  small_server() {
    cache = std::make_unique<core::matrix_cache>(std::vector<std::shared_ptr<spgemm::backend>>{spgemm::make_cpu_backend(1)},
                                                 std::vector<std::size_t>{64 << 20}, 16 << 20, 0);
    sched = std::make_unique<core::scheduler>(*cache, 8, 1);
  }
};

grpc::ByteBuffer message(const uint8_t* data, std::size_t n) {
  grpc::Slice slice(data, n);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static small_server server;
  upload_call call(*server.cache, *server.sched, server.spares, core::caller{});
  grpc::Status status;
  std::size_t at = 0;
  while (status.ok() && at + 2 <= size) {
    const std::size_t n = std::min<std::size_t>(data[at] | std::size_t{data[at + 1]} << 8, size - at - 2);
    status = call.receive(message(data + at + 2, n));
    at += 2 + n;
  }
  core::entry_info stored;
  if (status.ok()) status = call.complete(&stored);
  call.abandon();

  const core::cache_stats s = server.cache->stats();
  const std::size_t kept = status.ok() ? stored.bytes : 0;
  if (s.devices[0].reserved != 0 || s.devices[0].cached + s.host_bytes != kept) __builtin_trap();
  if (status.ok() && !server.cache->erase(core::caller{}, stored.handle)) __builtin_trap();
  return 0;
}
