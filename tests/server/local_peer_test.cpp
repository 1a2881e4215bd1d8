// Which gRPC peers count as on the server's host: only they may use shared
// memory and CUDA IPC.
#include <gtest/gtest.h>

#include "rpc/local_peer.hpp"

namespace spgemmd {
namespace {

TEST(local_peer, unix_sockets_and_loopback_addresses_are_local) {
  for (const char* peer : {"unix:/run/spgemmd.sock", "unix:", "unix-abstract:spgemmd", "ipv4:127.0.0.1:50051",
                           "ipv4:127.1.2.3:1", "ipv6:[::1]:50051", "ipv6:%5B::1%5D:50051",
                           "ipv6:[::ffff:127.0.0.1]:50051"}) {
    EXPECT_TRUE(is_local_peer(peer)) << peer;
  }
}

TEST(local_peer, every_other_address_is_remote) {
  for (const char* peer : {"ipv4:10.0.0.1:50051", "ipv4:128.0.0.1:1", "ipv4:1.127.0.0:1", "ipv6:[::2]:50051",
                           "ipv6:[fe80::1]:1", "ipv6:[::ffff:10.0.0.1]:1", "ipv6:[::1]", "", "127.0.0.1:50051",
                           "unknown", "dns:localhost:1", "ipv4:127"}) {
    EXPECT_FALSE(is_local_peer(peer)) << peer;
  }
}

}  // namespace
}  // namespace spgemmd
