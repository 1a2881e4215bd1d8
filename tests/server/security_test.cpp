// spgemmd's security, end to end (the real binary, CPU backend): bearer
// tokens (UNAUTHENTICATED without one, on the Local service's calls too; the
// tokens file read again on SIGHUP while calls go on), tenants (another tenant's handle is NOT_FOUND on every
// RPC; List and Status show a tenant its own; an admin sees all), quotas
// (RESOURCE_EXHAUSTED naming the quota), TLS and mutual TLS (certificates made
// with openssl for the run), and the refusal to serve an address other hosts
// can reach without TLS and tokens unless --insecure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "health.grpc.pb.h"
#include "spgemm/csr.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/v1/local.grpc.pb.h"
#include "spgemm/v1/spgemm.grpc.pb.h"
#include "spgemmd_process.hpp"
#include "wire/chunk_codec.hpp"

namespace v1 = spgemm::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using spgemmd::testing::spgemmd_process;

namespace {

const std::string alice_token = "alice-0123456789abcdef";
const std::string bob_token = "bob-0123456789abcdef01";
const std::string admin_token = "ops-0123456789abcdef012";
const std::string carol_token = "carol-0123456789abcdef";

// ---- files made for the run ---------------------------------------------------

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// A CA, a server certificate it signed (localhost, 127.0.0.1), a client
// certificate it signed, and a client certificate of another CA: EC keys,
// made with the openssl command once for the suite.
struct certificates {
  fs::path dir;
  bool made = false;

  certificates() {
    dir = fs::temp_directory_path() / ("spgemmd-security-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string d = dir.string();
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script =
        "set -e; cd '" + d + "'\n"
        "openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=spgemm-test-ca\n"
        "openssl req -x509 " + key + " -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca\n"
        "openssl req " + key + " -keyout server.key -out server.csr -subj /CN=localhost\n"
        "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext\n"
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
        "-extfile server.ext\n"
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
        "openssl req " + key + " -keyout client.key -out client.csr -subj /CN=alice\n"
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2 "
        "-extfile client.ext\n"
        "openssl req " + key + " -keyout stranger.key -out stranger.csr -subj /CN=stranger\n"
        "openssl x509 -req -in stranger.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial "
        "-out stranger.crt -days 2 -extfile client.ext\n";
    write_text(dir / "make.sh", script);
    made = std::system(("bash '" + d + "/make.sh' >'" + d + "/make.log' 2>&1").c_str()) == 0;
  }
  ~certificates() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::string pem(const std::string& name) const { return read_text(dir / name); }
};

const certificates& certs() {
  static const certificates c;
  return c;
}

// A tokens file of alice (small quotas), bob and the admin ops, in the suite's folder.
std::string tokens_file(const std::string& name, const std::string& text) {
  const fs::path p = certs().dir / name;
  write_text(p, text);
  return p.string();
}

std::string standard_tokens() {
  return tokens_file("tokens",
                     "# test tokens\n" + alice_token + " alice device_bytes=64KiB host_bytes=64KiB queued_jobs=8\n" +
                         bob_token + " bob\n" + admin_token + " ops admin\n");
}

// ---- a client of one tenant ------------------------------------------------------

using csr = spgemm::csr_matrix<double>;

spgemm::wire::csr_view view_of(const csr& m) {
  return {m.rows, m.cols, m.nnz(), m.row_offsets.data(), m.col_indices.data(), m.values.data(), v1::FLOAT64};
}

class tenant_client {
 public:
  tenant_client(const std::shared_ptr<grpc::Channel>& channel, std::string token)
      : stub_(v1::Spgemm::NewStub(channel)), token_(std::move(token)) {}

  grpc::Status upload(const csr& m, std::string* handle) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::MatrixInfo info;
    auto writer = stub_->Upload(&ctx, &info);
    v1::UploadPart part;
    *part.mutable_header() = spgemm::wire::header_of(view_of(m));
    writer->Write(part);
    for (auto [b, e] : spgemm::wire::plan_row_blocks(view_of(m), 64 << 10)) {
      part.Clear();
      spgemm::wire::fill_chunk(view_of(m), b, e, part.mutable_chunk());
      if (!writer->Write(part)) break;
    }
    writer->WritesDone();
    grpc::Status st = writer->Finish();
    if (handle != nullptr) *handle = info.handle();
    return st;
  }

  std::string upload_ok(const csr& m) {
    std::string handle;
    const grpc::Status st = upload(m, &handle);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return handle;
  }

  grpc::Status multiply(const std::string& a, const std::string& b, bool keep = false, std::string* kept = nullptr) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::MultiplyRequest req;
    req.set_a(a);
    req.set_b(b);
    req.mutable_output()->set_keep(keep);
    return drain(*stub_->Multiply(&ctx, req), kept);
  }
  grpc::Status galerkin(const std::string& p, const std::string& a) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::GalerkinRequest req;
    req.set_p(p);
    req.set_a(a);
    req.set_form(v1::PT_A_P);
    return drain(*stub_->Galerkin(&ctx, req), nullptr);
  }
  grpc::Status transpose(const std::string& a) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::TransposeRequest req;
    req.set_a(a);
    return drain(*stub_->Transpose(&ctx, req), nullptr);
  }
  grpc::Status download(const std::string& handle) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::DownloadRequest req;
    req.set_handle(handle);
    return drain(*stub_->Download(&ctx, req), nullptr);
  }
  grpc::Status describe(const std::string& handle, v1::MatrixInfo* out = nullptr) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::DescribeRequest req;
    req.set_handle(handle);
    v1::MatrixInfo info;
    return stub_->Describe(&ctx, req, out ? out : &info);
  }
  grpc::Status erase(const std::string& handle) {
    grpc::ClientContext ctx;
    prepare(ctx);
    v1::DeleteRequest req;
    req.set_handle(handle);
    v1::DeleteResponse resp;
    return stub_->Delete(&ctx, req, &resp);
  }
  grpc::Status list(v1::ListResponse* out) {
    grpc::ClientContext ctx;
    prepare(ctx);
    return stub_->List(&ctx, v1::ListRequest(), out);
  }
  grpc::Status status(v1::ServerStatus* out) {
    grpc::ClientContext ctx;
    prepare(ctx);
    return stub_->Status(&ctx, v1::StatusRequest(), out);
  }

 private:
  void prepare(grpc::ClientContext& ctx) const {
    ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
  }
  static grpc::Status drain(grpc::ClientReader<v1::ResultPart>& reader, std::string* kept) {
    v1::ResultPart part;
    while (reader.Read(&part)) {
      if (part.has_kept() && kept != nullptr) *kept = part.kept().handle();
    }
    return reader.Finish();
  }

  std::unique_ptr<v1::Spgemm::Stub> stub_;
  std::string token_;
};

std::shared_ptr<grpc::Channel> plaintext(const spgemmd_process& s) {
  return grpc::CreateChannel(s.address(), grpc::InsecureChannelCredentials());
}

// A TLS channel that trusts the suite's CA (and presents `client`'s certificate where given).
std::shared_ptr<grpc::Channel> tls_channel(const spgemmd_process& s, const std::string& client = "") {
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = certs().pem("ca.crt");
  if (!client.empty()) {
    o.pem_private_key = certs().pem(client + ".key");
    o.pem_cert_chain = certs().pem(client + ".crt");
  }
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  return grpc::CreateCustomChannel(s.address(), grpc::SslCredentials(o), args);
}

const csr& matrix() {
  static const csr m = spgemm::generate("poisson2d5:12");
  return m;
}

#define EXPECT_CODE(call, code)                                     \
  do {                                                              \
    const grpc::Status st_ = (call);                                \
    EXPECT_EQ(st_.error_code(), code) << #call << ": " << st_.error_message(); \
  } while (0)

// Every call of the Local service (shared memory, CUDA IPC) with `token` ends
// `code`; where `code` is OK, the caller passes and each call goes on to what
// it asks (a session opened, regions listed; no such object, session or region:
// NOT_FOUND; CUDA IPC from no arrays: refused, whichever backend).
void expect_local_calls(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        grpc::StatusCode code) {
  auto local = v1::Local::NewStub(channel);
  auto call = [&](auto&& rpc) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    return rpc(ctx);
  };
  const bool ok = code == grpc::StatusCode::OK;
  const std::string key = "/spgemmd-security-" + std::to_string(getpid());
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                auto reader = local->OpenSession(&c, v1::OpenSessionRequest());
                v1::SessionEvent event;
                EXPECT_EQ(reader->Read(&event), ok);
                if (ok) c.TryCancel();  // the session ends with the call
                const grpc::Status st = reader->Finish();
                return ok && st.error_code() == grpc::StatusCode::CANCELLED ? grpc::Status::OK : st;
              }),
              code);
  v1::ProveLocalRequest prove;
  prove.set_key(key);
  prove.set_token(std::string(32, 'x'));
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                v1::ProveLocalResponse r;
                return local->ProveLocal(&c, prove, &r);
              }),
              ok ? grpc::StatusCode::NOT_FOUND : code);  // no such object
  v1::RegisterRegionRequest region;
  region.set_session("s-0");
  region.set_name("r");
  region.set_key(key);
  region.set_byte_size(64);
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                v1::RegionInfo r;
                return local->RegisterRegion(&c, region, &r);
              }),
              ok ? grpc::StatusCode::NOT_FOUND : code);  // no such session
  v1::UnregisterRegionRequest unregister;
  unregister.set_name("r");
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                v1::UnregisterRegionResponse r;
                return local->UnregisterRegion(&c, unregister, &r);
              }),
              ok ? grpc::StatusCode::NOT_FOUND : code);
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                v1::ListRegionsResponse r;
                const grpc::Status st = local->ListRegions(&c, v1::ListRegionsRequest(), &r);
                EXPECT_EQ(r.regions_size(), 0);
                return st;
              }),
              code);
  v1::RegionUploadRequest from_region;
  from_region.mutable_header()->set_rows(1);
  from_region.mutable_header()->set_cols(1);
  from_region.mutable_header()->set_value_type(v1::FLOAT64);
  from_region.mutable_header()->set_index_type(v1::INT32);
  from_region.mutable_row_offsets()->set_region("r");
  from_region.mutable_row_offsets()->set_length(16);
  EXPECT_CODE(call([&](grpc::ClientContext& c) {
                v1::MatrixInfo r;
                return local->UploadFromRegion(&c, from_region, &r);
              }),
              ok ? grpc::StatusCode::NOT_FOUND : code);
  v1::DeviceUploadRequest from_device;
  *from_device.mutable_header() = from_region.header();
  const grpc::Status device = call([&](grpc::ClientContext& c) {
    v1::MatrixInfo r;
    return local->UploadFromDevice(&c, from_device, &r);
  });
  if (ok) {
    EXPECT_NE(device.error_code(), grpc::StatusCode::UNAUTHENTICATED) << device.error_message();
    EXPECT_FALSE(device.ok());
  } else {
    EXPECT_EQ(device.error_code(), code) << device.error_message();
  }
}
#define EXPECT_LOCAL_CALLS(channel, token, code) \
  do {                                           \
    SCOPED_TRACE("Local service, token '" + std::string(token) + "'"); \
    expect_local_calls(channel, token, code);    \
  } while (0)

struct security_test : ::testing::Test {
  void SetUp() override { ASSERT_TRUE(certs().made) << read_text(certs().dir / "make.log"); }
};

// ---- tokens --------------------------------------------------------------------------

TEST_F(security_test, without_a_valid_token_every_rpc_is_unauthenticated) {
  spgemmd_process s({"--tokens_file=" + standard_tokens()});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client alice(plaintext(s), alice_token);
  const std::string a = alice.upload_ok(matrix());
  for (const std::string& token : {std::string(), std::string("not-a-token-of-this-server")}) {
    tenant_client nobody(plaintext(s), token);
    const auto unauthenticated = grpc::StatusCode::UNAUTHENTICATED;
    EXPECT_CODE(nobody.upload(matrix(), nullptr), unauthenticated);
    EXPECT_CODE(nobody.multiply(a, a), unauthenticated);
    EXPECT_CODE(nobody.galerkin(a, a), unauthenticated);
    EXPECT_CODE(nobody.transpose(a), unauthenticated);
    EXPECT_CODE(nobody.download(a), unauthenticated);
    EXPECT_CODE(nobody.describe(a), unauthenticated);
    EXPECT_CODE(nobody.erase(a), unauthenticated);
    v1::ListResponse listed;
    EXPECT_CODE(nobody.list(&listed), unauthenticated);
    v1::ServerStatus status;
    const grpc::Status st = nobody.status(&status);
    EXPECT_EQ(st.error_code(), unauthenticated);
    EXPECT_NE(st.error_message().find("authorization: Bearer <token>"), std::string::npos) << st.error_message();
    EXPECT_LOCAL_CALLS(plaintext(s), token, unauthenticated);
  }
  EXPECT_CODE(alice.describe(a), grpc::StatusCode::OK);  // nothing of hers was touched
  EXPECT_LOCAL_CALLS(plaintext(s), alice_token, grpc::StatusCode::OK);

  // Health answers without a token (probes carry none).
  auto health = grpc::health::v1::Health::NewStub(plaintext(s));
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckResponse resp;
  EXPECT_TRUE(health->Check(&ctx, grpc::health::v1::HealthCheckRequest(), &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(security_test, a_bad_tokens_file_stops_the_start_with_its_line) {
  spgemmd_process s({"--tokens_file=" + tokens_file("bad-tokens", alice_token + " alice\nshort bob\n")});
  EXPECT_EQ(s.wait_exit(), 2);
  EXPECT_NE(s.log().find("bad-tokens:2: a token must have at least 16 characters"), std::string::npos) << s.log();
}

TEST_F(security_test, tokens_are_read_again_on_sighup_while_calls_go_on) {
  const std::string path = tokens_file("reloaded-tokens", alice_token + " alice\n" + bob_token + " bob\n");
  spgemmd_process s({"--tokens_file=" + path});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client alice(plaintext(s), alice_token);
  const std::string a = alice.upload_ok(matrix());

  // Alice's calls go on through every reload: none may fail.
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      tenant_client c(plaintext(s), alice_token);
      while (!stop) {
        const grpc::Status st = c.multiply(a, a);
        ++calls;
        if (!st.ok()) {
          ++failures;
          ADD_FAILURE() << "a call of a token in every file failed: " << st.error_message();
        }
      }
    });
  }
  for (int i = 0; i < 10; ++i) {
    write_text(path, i % 2 == 0 ? alice_token + " alice\n" + carol_token + " carol\n"
                                : alice_token + " alice\n" + bob_token + " bob\n");
    s.signal(SIGHUP);
    std::this_thread::sleep_for(50ms);
  }
  write_text(path, alice_token + " alice\n" + carol_token + " carol\n");
  s.signal(SIGHUP);
  // A bad file on a later SIGHUP leaves these tokens in place.
  std::this_thread::sleep_for(200ms);
  write_text(path, "this line is no token\n");
  s.signal(SIGHUP);
  std::this_thread::sleep_for(300ms);
  stop = true;
  for (auto& t : callers) t.join();
  EXPECT_GT(calls.load(), 8);
  EXPECT_EQ(failures.load(), 0);

  v1::ServerStatus st;
  EXPECT_CODE(tenant_client(plaintext(s), carol_token).status(&st), grpc::StatusCode::OK);
  EXPECT_EQ(st.tenant(), "carol");
  EXPECT_CODE(tenant_client(plaintext(s), bob_token).status(&st), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.log().find("tokens_reloaded"), std::string::npos);
  EXPECT_NE(s.log().find("tokens_reload_failed"), std::string::npos) << s.log();
  EXPECT_EQ(s.wait_exit(0ms), -1) << "SIGHUP must not stop the server";
}

// ---- tenants --------------------------------------------------------------------------

TEST_F(security_test, another_tenants_handle_is_not_found_on_every_rpc) {
  spgemmd_process s({"--tokens_file=" + standard_tokens()});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client alice(plaintext(s), alice_token), bob(plaintext(s), bob_token);
  const std::string a = alice.upload_ok(matrix());
  std::string kept;
  ASSERT_TRUE(alice.multiply(a, a, /*keep=*/true, &kept).ok());
  const std::string b = bob.upload_ok(matrix());

  const auto not_found = grpc::StatusCode::NOT_FOUND;
  for (const std::string& h : {a, kept}) {
    EXPECT_CODE(bob.download(h), not_found);
    EXPECT_CODE(bob.multiply(h, h), not_found);
    EXPECT_CODE(bob.multiply(b, h), not_found);
    EXPECT_CODE(bob.multiply(h, b, /*keep=*/true), not_found);
    EXPECT_CODE(bob.galerkin(h, b), not_found);
    EXPECT_CODE(bob.galerkin(b, h), not_found);
    EXPECT_CODE(bob.transpose(h), not_found);
    EXPECT_CODE(bob.describe(h), not_found);
    EXPECT_CODE(bob.erase(h), not_found);
    // The same message as a handle that never was: nothing says it exists.
    v1::MatrixInfo info;
    EXPECT_EQ(bob.describe(h).error_message(),
              "no matrix with handle " + h + "; it may have expired or been deleted");
  }
  v1::ListResponse listed;
  ASSERT_TRUE(bob.list(&listed).ok());
  ASSERT_EQ(listed.matrices_size(), 1);
  EXPECT_EQ(listed.matrices(0).handle(), b);
  EXPECT_EQ(listed.matrices(0).tenant(), "bob");
  v1::ServerStatus status;
  ASSERT_TRUE(bob.status(&status).ok());
  EXPECT_EQ(status.tenant(), "bob");
  EXPECT_FALSE(status.admin());
  EXPECT_EQ(status.matrices(), 1);
  EXPECT_EQ(status.jobs_completed(), 0);  // alice's product is not his
  ASSERT_EQ(status.devices_size(), 1);
  EXPECT_EQ(status.devices(0).cached_bytes(), listed.matrices(0).bytes());
  EXPECT_EQ(status.devices(0).free_bytes(), 0);  // the server's use is not his to see

  // Alice's are all still there, and hers to use.
  EXPECT_CODE(alice.describe(a), grpc::StatusCode::OK);
  EXPECT_CODE(alice.download(kept), grpc::StatusCode::OK);
  ASSERT_TRUE(alice.list(&listed).ok());
  EXPECT_EQ(listed.matrices_size(), 2);
  ASSERT_TRUE(alice.status(&status).ok());
  EXPECT_EQ(status.matrices(), 2);
  EXPECT_EQ(status.jobs_completed(), 1);
  EXPECT_EQ(status.quotas().device_bytes(), 64 << 10);
  EXPECT_EQ(status.quotas().queued_jobs(), 8);
}

TEST_F(security_test, an_admin_sees_and_uses_every_tenants_matrices) {
  spgemmd_process s({"--tokens_file=" + standard_tokens()});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client alice(plaintext(s), alice_token), bob(plaintext(s), bob_token), ops(plaintext(s), admin_token);
  const std::string a = alice.upload_ok(matrix());
  const std::string b = bob.upload_ok(matrix());
  v1::ListResponse listed;
  ASSERT_TRUE(ops.list(&listed).ok());
  ASSERT_EQ(listed.matrices_size(), 2);
  v1::ServerStatus status;
  ASSERT_TRUE(ops.status(&status).ok());
  EXPECT_TRUE(status.admin());
  EXPECT_EQ(status.matrices(), 2);
  EXPECT_GT(status.devices(0).free_bytes(), 0);
  v1::MatrixInfo info;
  ASSERT_TRUE(ops.describe(a, &info).ok());
  EXPECT_EQ(info.tenant(), "alice");
  EXPECT_CODE(ops.multiply(a, b), grpc::StatusCode::OK);
  EXPECT_CODE(ops.download(b), grpc::StatusCode::OK);
  EXPECT_CODE(ops.erase(a), grpc::StatusCode::OK);
  EXPECT_CODE(alice.describe(a), grpc::StatusCode::NOT_FOUND);
}

TEST_F(security_test, a_quota_exceeded_is_resource_exhausted_naming_it) {
  spgemmd_process s({"--tokens_file=" + standard_tokens()});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client alice(plaintext(s), alice_token), bob(plaintext(s), bob_token);
  const csr big = spgemm::generate("poisson2d5:40");  // about 95 KiB: over both her 64 KiB quotas
  const grpc::Status refused = alice.upload(big, nullptr);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("quota"), std::string::npos) << refused.error_message();
  const csr mid = spgemm::generate("poisson2d5:24");  // about 34 KiB: one on the device, one on the host
  alice.upload_ok(mid);
  alice.upload_ok(mid);
  const grpc::Status third = alice.upload(mid, nullptr);
  EXPECT_EQ(third.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(third.error_message().find("tenant 'alice' is at its host_bytes quota"), std::string::npos)
      << third.error_message();
  bob.upload_ok(big);  // bob has no quotas
}

// ---- TLS and who may listen where ---------------------------------------------------------

TEST_F(security_test, tls_serves_clients_that_trust_its_ca_and_refuses_plaintext) {
  spgemmd_process s({"--tls_cert=" + certs().path("server.crt"), "--tls_key=" + certs().path("server.key")});
  ASSERT_TRUE(s.serving()) << s.log();
  tenant_client over_tls(tls_channel(s), "");
  v1::ServerStatus status;
  EXPECT_CODE(over_tls.status(&status), grpc::StatusCode::OK);
  EXPECT_TRUE(over_tls.upload_ok(matrix()).size() > 2);
  EXPECT_CODE(tenant_client(plaintext(s), "").status(&status), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(security_test, mutual_tls_serves_only_clients_with_a_certificate_of_its_ca) {
  spgemmd_process s({"--tls_cert=" + certs().path("server.crt"), "--tls_key=" + certs().path("server.key"),
                     "--tls_client_ca=" + certs().path("ca.crt"), "--tokens_file=" + standard_tokens()});
  ASSERT_TRUE(s.serving()) << s.log();
  v1::ServerStatus status;
  EXPECT_CODE(tenant_client(tls_channel(s, "client"), alice_token).status(&status), grpc::StatusCode::OK);
  EXPECT_EQ(status.tenant(), "alice");
  EXPECT_CODE(tenant_client(tls_channel(s, "client"), "").status(&status), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_CODE(tenant_client(tls_channel(s), alice_token).status(&status), grpc::StatusCode::UNAVAILABLE);
  EXPECT_CODE(tenant_client(tls_channel(s, "stranger"), alice_token).status(&status),
              grpc::StatusCode::UNAVAILABLE);
}

TEST_F(security_test, a_key_that_is_not_the_certificates_stops_the_start) {
  spgemmd_process s({"--tls_cert=" + certs().path("server.crt"), "--tls_key=" + certs().path("client.key")});
  EXPECT_EQ(s.wait_exit(), 2);
  EXPECT_NE(s.log().find("is not the key of the certificate in --tls_cert"), std::string::npos) << s.log();
}

TEST_F(security_test, an_address_other_hosts_reach_needs_tls_and_tokens_or_insecure) {
  const std::string tls_cert = "--tls_cert=" + certs().path("server.crt");
  const std::string tls_key = "--tls_key=" + certs().path("server.key");
  const std::string tokens = "--tokens_file=" + standard_tokens();
  for (const std::string& listen : {std::string("--listen=0.0.0.0:0"), std::string("--listen=[::]:0")}) {
    {
      spgemmd_process s({listen});
      EXPECT_EQ(s.wait_exit(), 2) << listen;
      EXPECT_NE(s.log().find("without TLS and tokens"), std::string::npos) << s.log();
      EXPECT_NE(s.log().find("--insecure"), std::string::npos) << s.log();
    }
    {
      spgemmd_process s({listen, tokens});
      EXPECT_EQ(s.wait_exit(), 2) << listen;
      EXPECT_NE(s.log().find("without TLS:"), std::string::npos) << s.log();
    }
    {
      spgemmd_process s({listen, tls_cert, tls_key});
      EXPECT_EQ(s.wait_exit(), 2) << listen;
      EXPECT_NE(s.log().find("without tokens"), std::string::npos) << s.log();
    }
  }
  spgemmd_process insecure({"--listen=0.0.0.0:0", "--insecure"});
  ASSERT_TRUE(insecure.serving()) << insecure.log();
  EXPECT_NE(insecure.log().find("level=warn event=insecure"), std::string::npos) << insecure.log();
  spgemmd_process secured({"--listen=0.0.0.0:0", tls_cert, tls_key, tokens});
  ASSERT_TRUE(secured.serving()) << secured.log();
  v1::ServerStatus status;
  EXPECT_CODE(tenant_client(tls_channel(secured), admin_token).status(&status), grpc::StatusCode::OK);
  spgemmd_process local({"--listen=127.0.0.1:0"});  // loopback: neither needed
  EXPECT_TRUE(local.serving()) << local.log();
}

}  // namespace
