// server/auth alone: the tokens file's lines (tenants, admin, quotas, sizes,
// sha256: tokens) and its errors, and which listen addresses are local.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <stdexcept>
#include <string>

#include "auth/exposure.hpp"
#include "auth/tokens.hpp"

namespace spgemmd::auth {
namespace {

// The error token_table::parse throws for `text`, or "" where it reads it.
std::string error_of(const std::string& text) {
  try {
    token_table::parse(text, "tokens");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string sha256_hex(const std::string& s) {
  unsigned char d[32];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), d, &n, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : d) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

TEST(tokens, lines_name_tenants_admins_and_quotas) {
  const token_table t = token_table::parse(
      "# comment\n"
      "\n"
      "alice-token-0123456789  alice  device_bytes=8GiB host_bytes=512MiB running_jobs=4 queued_jobs=64\n"
      "alice-token-second-one  alice  device_bytes=8GiB host_bytes=512MiB running_jobs=4 queued_jobs=64\n"
      "sha256:" + sha256_hex("ops-token-0123456789") + " ops admin\n"
      "bob-token-0123456789ab bob host_bytes=1000\n",
      "tokens");
  EXPECT_EQ(t.size(), 4u);
  const core::caller* alice = t.find("alice-token-0123456789");
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->tenant, "alice");
  EXPECT_FALSE(alice->admin);
  EXPECT_EQ(alice->limits.device_bytes, 8ull << 30);
  EXPECT_EQ(alice->limits.host_bytes, 512ull << 20);
  EXPECT_EQ(alice->limits.running_jobs, 4);
  EXPECT_EQ(alice->limits.queued_jobs, 64);
  EXPECT_EQ(t.find("alice-token-second-one")->tenant, "alice");
  const core::caller* ops = t.find("ops-token-0123456789");
  ASSERT_NE(ops, nullptr);
  EXPECT_TRUE(ops->admin);
  EXPECT_EQ(t.find("bob-token-0123456789ab")->limits.host_bytes, 1000u);
  EXPECT_EQ(t.find("bob-token-0123456789a"), nullptr);
  EXPECT_EQ(t.find(""), nullptr);
}

TEST(tokens, a_bad_line_is_named_with_what_is_wrong) {
  EXPECT_EQ(error_of("short alice\n"), "tokens:1: a token must have at least 16 characters");
  EXPECT_EQ(error_of("# c\nalice-token-0123456789\n"), "tokens:2: a token needs a tenant: TOKEN TENANT [OPTIONS]");
  EXPECT_NE(error_of("alice-token-0123456789 al/ice\n").find("tokens:1: tenant 'al/ice'"), std::string::npos);
  EXPECT_NE(error_of("alice-token-0123456789 alice device_bytes=8GB\n").find("KiB, MiB, GiB or TiB"),
            std::string::npos);
  EXPECT_NE(error_of("alice-token-0123456789 alice device_bytes=99999999999999TiB\n").find("too large"),
            std::string::npos);
  EXPECT_NE(error_of("alice-token-0123456789 alice queued_jobs=-1\n").find("not a count"), std::string::npos);
  EXPECT_NE(error_of("alice-token-0123456789 alice superuser\n").find("unknown option 'superuser'"),
            std::string::npos);
  EXPECT_NE(error_of("sha256:abc alice\n").find("64 hex digits"), std::string::npos);
  EXPECT_EQ(error_of("alice-token-0123456789 alice\nalice-token-0123456789 bob\n"),
            "tokens:2: this token is given twice");
  EXPECT_NE(error_of("alice-token-0123456789 alice\nalice-token-abcdefghij alice admin\n")
                .find("tokens:2: tenant 'alice' has other options on an earlier line"),
            std::string::npos);
  EXPECT_EQ(error_of("# nothing\n"), "tokens: no tokens: every call would be refused");
}

TEST(exposure, loopback_and_unix_sockets_are_local_and_the_rest_is_not) {
  for (const char* local : {"127.0.0.1:50051", "127.1.2.3:0", "localhost:50051", "LOCALHOST:1", "[::1]:50051",
                            "[::ffff:127.0.0.1]:5", "unix:/run/spgemmd.sock", "unix:///tmp/s", "unix-abstract:spgemmd",
                            "ipv4:127.0.0.1:50051"}) {
    EXPECT_TRUE(is_local_address(local)) << local;
  }
  for (const char* exposed : {"0.0.0.0:50051", "[::]:50051", ":50051", "10.0.0.5:50051", "[fe80::1]:1",
                              "gpu1.example.com:50051", "128.0.0.1:1"}) {
    EXPECT_FALSE(is_local_address(exposed)) << exposed;
  }
  EXPECT_EQ(exposure_refusal("127.0.0.1:50051", false, false, false), "");
  EXPECT_EQ(exposure_refusal("0.0.0.0:50051", true, true, false), "");
  EXPECT_EQ(exposure_refusal("0.0.0.0:50051", false, false, true), "");
  EXPECT_NE(exposure_refusal("0.0.0.0:50051", true, false, false).find("without tokens"), std::string::npos);
}

}  // namespace
}  // namespace spgemmd::auth
