// Helpers of the attack tests: a spgemmd child process on loopback (its
// pid, ports, resident memory and log), raw bytes sent to any method or to
// the metrics port, and the wire helpers the tests share.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "http_scrape.hpp"
#include "spgemm/csr.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"
#include "spgemmd_server.hpp"

namespace spgemm::attack {

using csr = spgemm::csr_matrix<double>;

// Whether this build runs under AddressSanitizer (tests/sanitize): its shadow
// memory and quarantine make memory limits and RSS figures meaningless.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool address_sanitized = true;
#else
constexpr bool address_sanitized = false;
#endif
#else
constexpr bool address_sanitized = false;
#endif

// spgemmd on 127.0.0.1 with the CPU backend (whatever SPGEMM_TEST_BACKEND
// says), metrics on a free loopback port, and `flags` after those. Killed
// when destroyed, unless it exited.
class spgemmd_child : public spgemmd::testing::spgemmd_server {
 public:
  // `address_space_bytes` > 0: the child runs under that RLIMIT_AS, so that
  // allocations fail before the machine's memory runs out.
  explicit spgemmd_child(const std::vector<std::string>& flags, std::size_t address_space_bytes = 0);
};

// Starts this binary as a child client (`--child MODE ARGS...`); its pid.
pid_t spawn_self(const std::vector<std::string>& args);
// The child clients (fault_test.cpp), `args` = MODE ARGS...: "upload-half
// ADDRESS READY_FILE" sends a header and half of a large matrix's chunks,
// "download-some ADDRESS HANDLE READY_FILE" reads a download's first
// message; each then creates READY_FILE and waits to be killed.
int run_child(const std::vector<std::string>& args);

// Sends `messages` (raw bytes each) to `method` ("/spgemm.v1.Spgemm/List"),
// then reads every reply; the call's status, the replies in `replies`.
grpc::Status raw_call(const std::shared_ptr<grpc::Channel>& channel, const std::string& method, const std::vector<std::string>& messages,
                      std::vector<std::string>* replies = nullptr,
                      std::chrono::milliseconds deadline = std::chrono::seconds(30));
// A message's bytes.
std::string bytes_of(const google::protobuf::Message& m);

// The metrics port (tests/server/http_scrape.hpp).
using spgemmd::testing::connect_loopback;
using spgemmd::testing::http_get;
using spgemmd::testing::metric;

// ---- the wire ----------------------------------------------------------------

spgemm::v1::MatrixHeader header_of(const csr& m, const std::string& name = "");
// The chunks of `m`, each under `chunk_bytes`.
std::vector<spgemm::v1::UploadPart> chunks_of(const csr& m, std::size_t chunk_bytes);
// Uploads `m`; the handle, or "" with the status in `status`.
std::string upload(spgemm::v1::Spgemm::Stub& stub, const csr& m, grpc::Status* status = nullptr,
                   const std::string& name = "");
// Uploads the parts as they are.
grpc::Status upload_parts(spgemm::v1::Spgemm::Stub& stub, const std::vector<spgemm::v1::UploadPart>& parts);

struct result {
  grpc::Status status;
  csr matrix;                      // a streamed result or a download
  spgemm::v1::MatrixInfo kept;     // a kept result
};
// Reads a ResultPart stream to its end.
result read_result(grpc::ClientReaderInterface<spgemm::v1::ResultPart>& reader);
result multiply(spgemm::v1::Spgemm::Stub& stub, const std::string& a, const std::string& b, bool keep = false,
                std::chrono::milliseconds deadline = std::chrono::milliseconds(0));
result download(spgemm::v1::Spgemm::Stub& stub, const std::string& handle);
spgemm::v1::ServerStatus server_status(spgemm::v1::Spgemm::Stub& stub);

// Waits (up to 10 s) until the server holds no reservation, runs no job and queues none; whether it did.
bool settles(spgemm::v1::Spgemm::Stub& stub);

}  // namespace spgemm::attack
