// The CPU backend's part of algebraic multigrid (amg/operations.hpp): the
// passes of engine/amg/cpu/ on its stored matrices, vectors in host memory,
// every array counted on the backend's counter.
#pragma once

#include <memory>

#include "amg/operations.hpp"
#include "cpu/host_memory.hpp"

namespace spgemm::cpu {

std::unique_ptr<amg::operations> make_amg_operations(std::shared_ptr<byte_counter> counter, int threads);

}  // namespace spgemm::cpu
