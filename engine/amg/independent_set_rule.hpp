// The rule of the distance-2 independent set (Bell, Dalton & Olson 2012,
// appendix, algorithm 5), shared by the CPU pass and the GPU kernels so that
// both select the same roots: every node carries a 64-bit key (state, score,
// priority, index), compared as a number; a round takes, for every node, the
// largest key within two steps (two sweeps of the maximum over neighbours and
// itself) and decides the undecided nodes by it.
//
// The score puts the nodes with the fewest undecided neighbours first, as the
// minimum-degree greedy rule does, before the hashed priority: rounds then
// grow the set from the boundaries and from the roots chosen before, packing
// roots about as densely as pyamg's sequential aggregation does (on 2-D
// Poisson, a random priority alone left a sixth fewer aggregates and took
// 1.27x pyamg's CG iterations; this rule 1.18x), for about ten rounds.
#pragma once

#include <cstdint>

#include "planner/host_device.hpp"

namespace spgemm::amg {

// States, in the order a key compares them: a member of the set outranks an
// undecided node, which outranks one that left.
enum : std::uint64_t { state_out = 0, state_undecided = 1, state_member = 2 };

// The priority of node i: a hash of i (murmur3's finalizer), so that the
// nodes a round selects are spread over the graph.
SPGEMM_HOST_DEVICE inline std::uint32_t node_priority(std::int64_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i);
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

// node_priority(i) as a value in [-1, 1).
SPGEMM_HOST_DEVICE inline double hashed_value(std::int64_t i) { return node_priority(i) * (2.0 / 4294967296.0) - 1.0; }

// state in bits 62-63, the score (127 less the undecided neighbours, at
// least 0) in 55-61, 24 bits of priority in 31-54, index in 0-30 (nodes < 2^31).
SPGEMM_HOST_DEVICE inline std::uint64_t node_key(std::uint64_t state, std::int64_t undecided_neighbours,
                                                 std::int64_t i) {
  const std::uint64_t score = 127 - static_cast<std::uint64_t>(undecided_neighbours < 127 ? undecided_neighbours : 127);
  return state << 62 | score << 55 | static_cast<std::uint64_t>(node_priority(i) & 0xffffffu) << 31 |
         static_cast<std::uint64_t>(i);
}
SPGEMM_HOST_DEVICE inline std::uint64_t key_state(std::uint64_t key) { return key >> 62; }
SPGEMM_HOST_DEVICE inline std::int64_t key_index(std::uint64_t key) {
  return static_cast<std::int64_t>(key & 0x7fffffffu);
}

// The state of undecided node i after a round, from the largest key within
// two steps of it.
SPGEMM_HOST_DEVICE inline std::uint64_t decide(std::int64_t i, std::uint64_t largest_near) {
  if (key_index(largest_near) == i) return state_member;
  return key_state(largest_near) == state_member ? state_out : state_undecided;
}

}  // namespace spgemm::amg
