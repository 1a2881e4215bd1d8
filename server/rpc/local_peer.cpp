#include "rpc/local_peer.hpp"

namespace spgemmd {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool is_local_peer(const std::string& peer) {
  return starts_with(peer, "unix:") || starts_with(peer, "unix-abstract:") || starts_with(peer, "ipv4:127.") ||
         starts_with(peer, "ipv6:[::1]:") || starts_with(peer, "ipv6:%5B::1%5D:") ||
         starts_with(peer, "ipv6:[::ffff:127.");
}

}  // namespace spgemmd
