// Whether a caller is on the server's host, from gRPC's peer string: a Unix
// socket, or a loopback address. Shared memory and CUDA IPC are for those only.
#pragma once

#include <string>

namespace spgemmd {

// "unix:/path", "unix-abstract:name", "ipv4:127.x.y.z:port", "ipv6:[::1]:port"
// (and IPv4-mapped loopback "ipv6:[::ffff:127.0.0.1]:port") are local;
// anything else is not.
bool is_local_peer(const std::string& peer);

}  // namespace spgemmd
