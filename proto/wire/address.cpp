#include "address.hpp"

#include <algorithm>

namespace spgemm::wire {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// host, host:port, [v6], [v6]:port or a bare v6 address, with the port added where it lacks one.
std::string host_with_port(std::string_view host, int port) {
  const std::string suffix = ":" + std::to_string(port);
  if (starts_with(host, "[")) {
    const auto close = host.find(']');
    const bool has_port = close != std::string_view::npos && close + 1 < host.size() && host[close + 1] == ':';
    return has_port ? std::string(host) : std::string(host) + suffix;
  }
  const auto colons = std::count(host.begin(), host.end(), ':');
  if (colons == 0) return std::string(host) + suffix;
  if (colons == 1) return std::string(host);
  return "[" + std::string(host) + "]" + suffix;
}

}  // namespace

std::string with_default_port(std::string_view address, int port) {
  if (address.empty()) return std::string(address);
  for (std::string_view scheme : {"unix:", "unix-abstract:", "vsock:", "ipv4:", "ipv6:"}) {
    if (starts_with(address, scheme)) return std::string(address);
  }
  if (starts_with(address, "dns:")) {
    // dns:host, dns:///host or dns://authority/host: the host follows the last '/'.
    const auto slash = address.rfind('/');
    const auto host_at = slash == std::string_view::npos ? 4 : slash + 1;
    return std::string(address.substr(0, host_at)) + host_with_port(address.substr(host_at), port);
  }
  return host_with_port(address, port);
}

}  // namespace spgemm::wire
