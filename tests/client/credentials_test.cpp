// The client library and the CLI against a spgemmd that asks for all it can:
// TLS, a client certificate of its CA (mutual TLS) and a bearer token. The
// credentials are deploy/make-credentials.sh's, plus a client certificate
// its CA signs, made with openssl for the run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "spgemm/client/client.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;

struct secured_server {
  std::string dir = scratch_path("credentials");
  std::string token;
  std::string error;  // why it did not start
  spgemmd_process server;

  secured_server() {
    const std::string out = scratch_path("credentials.out");
    const std::string script =
        "set -e\n"
        "bash '" SPGEMM_SOURCE_DIR "/deploy/make-credentials.sh' '" + dir + "' > '" + out + "'\n"
        "cd '" + dir + "'\n"
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr "
        "-subj /CN=client\n"
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext "
        "-out client.crt\n";
    write_text(scratch_path("credentials.sh"), script);
    if (std::system(("bash '" + scratch_path("credentials.sh") + "' >'" + scratch_path("credentials.log") +
                     "' 2>&1").c_str()) != 0) {
      error = "making the credentials failed; see " + scratch_path("credentials.log");
      return;
    }
    std::ifstream in(out);
    std::string word;
    while (in >> word && word != "token:") {
    }
    in >> token;
    error = server.start({"--backend=cpu", "--tls_cert=" + file("tls.crt"), "--tls_key=" + file("tls.key"),
                                     "--tls_client_ca=" + file("ca.crt"), "--tokens_file=" + file("tokens")});
  }
  std::string file(const std::string& name) const { return dir + "/" + name; }

  sc::connection_options options(bool with_token = true, bool with_certificate = true) const {
    sc::connection_options o;
    o.address = server.address();
    o.tls = true;
    o.tls_target_name = "localhost";
    o.root_cert_file = file("ca.crt");
    if (with_certificate) {
      o.client_cert_file = file("client.crt");
      o.client_key_file = file("client.key");
    }
    if (with_token) o.token = token;
    o.deadline = std::chrono::seconds(30);
    return o;
  }
};

secured_server& secured() {
  static secured_server s;
  return s;
}

grpc::StatusCode status_code(const sc::connection_options& o) {
  try {
    sc::Client(o).status();
  } catch (const sc::Error& e) {
    return e.code();
  }
  return grpc::StatusCode::OK;
}

TEST(ClientCredentials, TheLibrarySendsItsTokenAndCertificateOverTls) {
  secured_server& s = secured();
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_EQ(s.token.size(), 64u);
  sc::Client client(s.options());
  const v1::ServerStatus status = client.status();
  EXPECT_EQ(status.tenant(), "admin");
  EXPECT_TRUE(status.admin());
  sc::csr_matrix m;
  m.rows = m.cols = 2;
  m.row_offsets = {0, 1, 2};
  m.col_indices = {0, 1};
  m.values = {2.0, 3.0};
  auto a = client.upload(m);
  const auto product = client.multiply(a.handle(), a.handle());
  EXPECT_EQ(product.matrix.values, (std::vector<double>{4.0, 9.0}));
}

TEST(ClientCredentials, WithoutATokenOrACertificateTheServerRefuses) {
  secured_server& s = secured();
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(status_code(s.options(/*with_token=*/false)), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status_code(s.options(true, /*with_certificate=*/false)), grpc::StatusCode::UNAVAILABLE);
  sc::connection_options half = s.options();
  half.client_key_file.clear();
  EXPECT_EQ(status_code(half), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(ClientCredentials, TheCliSendsItsTokenAndCertificate) {
  secured_server& s = secured();
  ASSERT_TRUE(s.error.empty()) << s.error;
  // --ca implies --tls; the certificate names localhost, not 127.0.0.1's port.
  const std::string server = "localhost:" + s.server.address().substr(s.server.address().rfind(':') + 1);
  const std::vector<std::string> tls = {"--server", server, "--ca", s.file("ca.crt"), "--cert", s.file("client.crt"),
                                        "--key", s.file("client.key")};
  std::vector<std::string> args = tls;
  args.insert(args.end(), {"--token", s.token, "status"});
  run_result r = run_cli(args, "");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("tenant      admin (admin: the whole server below); quotas: device none"), std::string::npos)
      << r.out;
  args = tls;
  args.push_back("status");
  r = run_cli(args, "");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("bearer token"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace spgemm::client_test
