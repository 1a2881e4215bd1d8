// Secure by default: spgemmd serves an address other hosts can reach only
// with TLS and tokens, or when told to with --insecure (as Redis's protected
// mode does). Loopback addresses and Unix sockets are reachable from this host
// only.
#pragma once

#include <string>

namespace spgemmd::auth {

// Whether the gRPC listen address `address` is reachable from this host only:
// a loopback IP (127.0.0.0/8, ::1), "localhost", or a Unix socket ("unix:",
// "unix-abstract:"). A wildcard (0.0.0.0, [::]) or any other name is not.
bool is_local_address(const std::string& address);

// Why spgemmd must not serve `address` with these settings (a sentence that
// says what to set), or empty where it may.
std::string exposure_refusal(const std::string& address, bool tls, bool tokens, bool insecure);

}  // namespace spgemmd::auth
