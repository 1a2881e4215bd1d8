// The attack tests' main: the tests, or (with --child MODE ...) one of the
// misbehaving clients they start as a process of their own and kill.
#include <gtest/gtest.h>

#include <string>

#include "spgemmd_child.hpp"

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--child") {
    return spgemm::attack::run_child(std::vector<std::string>(argv + 2, argv + argc));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
