#include "auth/exposure.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace spgemmd::auth {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The host part of "host:port" or "[v6]:port".
std::string host_of(const std::string& address) {
  if (starts_with(address, "[")) {
    const auto close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

bool is_local_address(const std::string& address) {
  if (starts_with(address, "unix:") || starts_with(address, "unix-abstract:")) return true;
  std::string host = host_of(starts_with(address, "ipv4:") || starts_with(address, "ipv6:") ? address.substr(5)
                                                                                            : address);
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (host == "localhost") return true;
  unsigned char ip[16];
  if (inet_pton(AF_INET, host.c_str(), ip) == 1) return ip[0] == 127;
  if (inet_pton(AF_INET6, host.c_str(), ip) == 1) {
    static const unsigned char loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(ip, loopback, 16) == 0 || (std::memcmp(ip, v4_mapped, 12) == 0 && ip[12] == 127);
  }
  return false;
}

std::string exposure_refusal(const std::string& address, bool tls, bool tokens, bool insecure) {
  if (insecure || (tls && tokens) || is_local_address(address)) return {};
  std::string missing = !tls && !tokens ? "TLS and tokens" : !tls ? "TLS" : "tokens";
  return "refusing to serve " + address + ", which other hosts can reach, without " + missing +
         ": set --tls_cert and --tls_key, and --tokens_file (docs/configuration.md#security), listen on "
         "loopback, or start with --insecure to serve it unprotected";
}

}  // namespace spgemmd::auth
