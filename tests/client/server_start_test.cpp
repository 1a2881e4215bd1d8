// Starting spgemmd: hard to misstart. A second server on a port already
// taken fails to start (gRPC's default SO_REUSEPORT would let both serve and
// split the connections); --help exits 0 and shows no build paths.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ServerStart, ASecondServerOnATakenPortFailsToStart) {
  spgemmd_process first;
  ASSERT_EQ(first.start({"--backend=cpu"}), "");
  spgemmd_process second;
  // The later --listen wins over the helper's 127.0.0.1:0.
  const std::string failure = second.start({"--backend=cpu", "--listen=" + first.address()});
  EXPECT_TRUE(contains(failure, "exited early")) << failure;
  EXPECT_TRUE(contains(failure, "cannot listen on " + first.address() + ": the port is taken")) << failure;
}

TEST(ServerStart, HelpExitsZeroWithoutBuildPaths) {
  const std::string out = scratch_path("spgemmd-help.txt");
  const int status = std::system((spgemmd_binary() + " --help >" + out + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string text;
  {
    std::ifstream in(out);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_TRUE(contains(text, "--listen")) << text;
  EXPECT_TRUE(contains(text, "SPGEMMD_")) << text;
  EXPECT_FALSE(contains(text, ".cpp")) << text;
  EXPECT_FALSE(contains(text, ".cc")) << text;
}

}  // namespace
}  // namespace spgemm::client_test
