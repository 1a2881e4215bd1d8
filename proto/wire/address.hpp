// Server addresses as both ends read them: an address without a port means
// spgemmd's port, 50051 (gRPC alone would take 443 for a client and refuse
// the address on a server).
#pragma once

#include <string>
#include <string_view>

namespace spgemm::wire {

constexpr int default_port = 50051;

// "host" -> "host:PORT", "[::1]" and "::1" -> "[::1]:PORT", "dns:///host" ->
// "dns:///host:PORT"; an address with a port, "unix:...", "unix-abstract:...",
// "vsock:..." and the address lists "ipv4:..." / "ipv6:..." come back as given.
std::string with_default_port(std::string_view address, int port = default_port);

}  // namespace spgemm::wire
