// An address without a port means spgemmd's port, 50051, for the client
// library, the CLI and the server alike (gRPC alone would take 443).
#include <gtest/gtest.h>

#include "spgemm/client/client.hpp"
#include "test_server.hpp"
#include "wire/address.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;

TEST(Address, WithoutAPortMeans50051) {
  using spgemm::wire::with_default_port;
  EXPECT_EQ(with_default_port("localhost"), "localhost:50051");
  EXPECT_EQ(with_default_port("10.0.0.7"), "10.0.0.7:50051");
  EXPECT_EQ(with_default_port("gpu1:7000"), "gpu1:7000");
  EXPECT_EQ(with_default_port("[::1]"), "[::1]:50051");
  EXPECT_EQ(with_default_port("[::1]:7000"), "[::1]:7000");
  EXPECT_EQ(with_default_port("::1"), "[::1]:50051");
  EXPECT_EQ(with_default_port("dns:///spgemmd.svc"), "dns:///spgemmd.svc:50051");
  EXPECT_EQ(with_default_port("dns://8.8.8.8/spgemmd.svc:7000"), "dns://8.8.8.8/spgemmd.svc:7000");
  EXPECT_EQ(with_default_port("unix:/run/spgemmd.sock"), "unix:/run/spgemmd.sock");
  EXPECT_EQ(with_default_port("0.0.0.0", 9464), "0.0.0.0:9464");
  EXPECT_EQ(with_default_port(""), "");
}

TEST(Address, TheClientAndTheCliConnectToPort50051) {
  sc::connection_options o;
  o.address = "127.0.0.1";
  EXPECT_EQ(sc::Client(o).options().address, "127.0.0.1:50051");

  // Where nothing listens on 50051 the CLI names the address it tried; where
  // a server does, it answers.
  const auto r = run_cli({"--server", "127.0.0.1", "ls"}, "");
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("cannot connect to server at 127.0.0.1:50051"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace spgemm::client_test
