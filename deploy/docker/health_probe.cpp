// spgemmd-health-probe: asks a gRPC server's standard health service
// (grpc.health.v1.Health/Check) whether it is SERVING. Exit 0 if it is, 1 if
// it answered anything else, 2 if it could not be reached or the call failed,
// 3 on a usage error. Used by the image's HEALTHCHECK and the Kubernetes
// probes (an exec probe: Kubernetes' own gRPC probe speaks no TLS).
//
// It needs no generated code: the two health messages are tiny, so they are
// encoded and decoded by hand and sent through gRPC's generic stub.
//   HealthCheckRequest  { string service = 1; }
//   HealthCheckResponse { ServingStatus status = 1; }  // SERVING = 1
//
// Usage: spgemmd-health-probe [--addr=HOST:PORT] [--service=NAME] [--timeout=SECONDS]
//                             [--tls] [--ca=FILE] [--cert=FILE --key=FILE]
// The address defaults to SPGEMMD_LISTEN (the server's own setting) with a
// wildcard host (0.0.0.0, [::] or empty) replaced by the loopback address,
// else 127.0.0.1:50051. TLS is on with --tls, or where SPGEMMD_TLS_CERT is set
// (the server serves TLS). With --ca the server's certificate is checked
// against those roots; without, it is not: the probe asks a server on its own
// host whether it serves, and sends nothing secret (the health service takes
// no token). --cert/--key present a client certificate, for a server that
// asks for one (--tls_client_ca).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fstream>
#include <memory>
#include <sstream>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/byte_buffer.h>

namespace {

constexpr int exit_serving = 0;
constexpr int exit_not_serving = 1;
constexpr int exit_unreachable = 2;
constexpr int exit_usage = 3;

std::string default_address() {
  const char* env = std::getenv("SPGEMMD_LISTEN");
  std::string a = env && *env ? env : "127.0.0.1:50051";
  const auto colon = a.rfind(':');
  if (colon == std::string::npos) return a;
  const std::string host = a.substr(0, colon);
  const std::string port = a.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0") return "127.0.0.1:" + port;
  if (host == "[::]" || host == "::") return "[::1]:" + port;
  return a;
}

std::string encode_request(const std::string& service) {
  std::string out;
  if (service.empty()) return out;  // proto3: an empty string field is not sent
  out.push_back(0x0a);              // field 1, wire type 2 (length-delimited)
  std::uint64_t n = service.size();
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
  return out + service;
}

bool read_varint(const std::string& s, std::size_t& i, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && i < s.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(s[i++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Returns the status field of a HealthCheckResponse (0, UNKNOWN, when absent), -1 if malformed.
long decode_status(const std::string& s) {
  long status = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::uint64_t key = 0, v = 0;
    if (!read_varint(s, i, key)) return -1;
    switch (key & 7) {
      case 0:
        if (!read_varint(s, i, v)) return -1;
        if ((key >> 3) == 1) status = static_cast<long>(v);
        break;
      case 1: i += 8; break;
      case 5: i += 4; break;
      case 2:
        if (!read_varint(s, i, v) || v > s.size() - i) return -1;
        i += v;
        break;
      default: return -1;
    }
  }
  return i == s.size() ? status : -1;
}

struct tls_options {
  bool on = false;
  std::string ca, cert, key;  // files
};

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

// The channel's credentials; nullptr (after a message) where a file can not be read.
std::shared_ptr<grpc::ChannelCredentials> credentials(const tls_options& t) {
  if (!t.on) return grpc::InsecureChannelCredentials();
  std::string ca, cert, key;
  for (const auto& [path, out] : {std::pair{&t.ca, &ca}, {&t.cert, &cert}, {&t.key, &key}}) {
    if (!path->empty() && !read_file(*path, out)) {
      std::fprintf(stderr, "health probe: cannot read %s\n", path->c_str());
      return nullptr;
    }
  }
  if (!ca.empty()) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = ca;
    o.pem_private_key = key;
    o.pem_cert_chain = cert;
    return grpc::SslCredentials(o);
  }
  grpc::experimental::TlsChannelCredentialsOptions o;
  o.set_verify_server_certs(false);
  o.set_check_call_host(false);
  o.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
  if (!cert.empty()) {
    o.set_certificate_provider(std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
        std::vector<grpc::experimental::IdentityKeyCertPair>{{key, cert}}));
    o.watch_identity_key_cert_pairs();
  }
  return grpc::experimental::TlsCredentials(o);
}

const char* status_name(long s) {
  switch (s) {
    case 0: return "UNKNOWN";
    case 1: return "SERVING";
    case 2: return "NOT_SERVING";
    case 3: return "SERVICE_UNKNOWN";
    default: return "?";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string address = default_address();
  std::string service;
  double timeout_s = 3;
  tls_options tls;
  const char* server_cert = std::getenv("SPGEMMD_TLS_CERT");
  tls.on = server_cert != nullptr && *server_cert != '\0';
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--addr=", 0) == 0) {
      address = a.substr(7);
    } else if (a.rfind("--service=", 0) == 0) {
      service = a.substr(10);
    } else if (a.rfind("--timeout=", 0) == 0) {
      timeout_s = std::atof(a.c_str() + 10);
    } else if (a == "--tls") {
      tls.on = true;
    } else if (a.rfind("--ca=", 0) == 0) {
      tls.on = true;
      tls.ca = a.substr(5);
    } else if (a.rfind("--cert=", 0) == 0) {
      tls.on = true;
      tls.cert = a.substr(7);
    } else if (a.rfind("--key=", 0) == 0) {
      tls.key = a.substr(6);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--addr=HOST:PORT] [--service=NAME] [--timeout=SECONDS]\n"
                   "          [--tls] [--ca=FILE] [--cert=FILE --key=FILE]\n"
                   "TLS: with --tls, or where SPGEMMD_TLS_CERT is set; --ca checks the server's certificate.\n"
                   "Exit 0: SERVING; 1: answered, not serving; 2: unreachable or failed.\n",
                   argv[0]);
      return a == "-h" || a == "--help" ? 0 : exit_usage;
    }
  }
  if (!(timeout_s > 0)) timeout_s = 3;
  if (tls.cert.empty() != tls.key.empty()) {
    std::fprintf(stderr, "health probe: --cert and --key go together\n");
    return exit_usage;
  }

  const std::shared_ptr<grpc::ChannelCredentials> creds = credentials(tls);
  if (!creds) return exit_usage;
  auto channel = grpc::CreateChannel(address, creds);
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000)));

  const std::string body = encode_request(service);
  grpc::Slice slice(body);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  if (!call) {
    std::fprintf(stderr, "health probe: cannot start the call to %s\n", address.c_str());
    return exit_unreachable;
  }
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok) {
    std::fprintf(stderr, "health probe: the call to %s did not complete\n", address.c_str());
    return exit_unreachable;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (!status.ok()) {
    std::fprintf(stderr, "health probe: %s: %d %s\n", address.c_str(), static_cast<int>(status.error_code()),
                 status.error_message().c_str());
    return status.error_code() == grpc::StatusCode::NOT_FOUND ? exit_not_serving : exit_unreachable;
  }
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  const long serving = decode_status(bytes);
  if (serving < 0) {
    std::fprintf(stderr, "health probe: %s: malformed HealthCheckResponse\n", address.c_str());
    return exit_unreachable;
  }
  std::printf("%s\n", status_name(serving));
  return serving == 1 ? exit_serving : exit_not_serving;
}
