// What the kernels' launch configurations read of the current device, and
// the one way they opt in to more than 48 KB of dynamic shared memory.
#pragma once

#include <cstddef>

namespace spgemm::cuda {

// What the kernels' launch configurations read of the current device: its
// SMs, the dynamic shared memory a block may opt in to (less 1 KB for the
// kernels' static shared memory), the threads an SM holds at once, and
// whether a kernel may launch while the one before it in its stream finishes
// (programmatic dependent launch, Hopper on), and its L2 cache (the planner
// asks whether B fits). Queried once per device, then cached.
struct device_facts {
  int sm_count = 132;
  int max_threads_per_sm = 2048;
  std::size_t max_shared = 48 * 1024;
  bool dependent_launch = false;
  std::size_t l2_bytes = 50u << 20;
};
device_facts current_device_facts();

// Lets `kernel` launch with as much dynamic shared memory as the current
// device allows a block of it (its opt-in maximum less the kernel's static
// shared memory); called before launches that may take more than the 48 KB
// default. The attribute is process-wide per kernel and device, so it is set
// once, to that largest value, and never lowered: set to each launch's size
// before the launch, concurrent jobs raced (one lowered it between another's
// setting and launch, which then failed with "invalid argument").
void allow_max_dynamic_shared(const void* kernel);
template <typename Kernel>
void allow_max_dynamic_shared(Kernel* kernel) {
  allow_max_dynamic_shared(reinterpret_cast<const void*>(kernel));
}

}  // namespace spgemm::cuda
