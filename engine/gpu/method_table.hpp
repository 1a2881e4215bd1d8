// The table of GPU methods: one row per method (method/method.hpp), the only
// place the GPU backend names them.
#pragma once

#include "method/method.hpp"

namespace spgemm::gpu {

const method::table& methods();

}  // namespace spgemm::gpu
