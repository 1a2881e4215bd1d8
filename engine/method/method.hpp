// The contract of a GPU method (rmerge, hash, esc, block, ...): a job in, an
// estimate or a product out. Each method's folder implements it and adds one
// row to the table of methods (engine/gpu/method_table.cpp); the GPU backend
// hands a method everything it may use in the job -- operands, what is known
// of them, tuning, memory and stream -- so methods include nothing of each
// other and nothing of the backend. The recipe for a new method is in
// docs/architecture.md.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"
#include "planner/job_rules.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::method {

// What a method reads of its operands beyond their arrays, measured on first
// use and kept with the stored matrices (a stored matrix never changes), or
// derived from them (the block method's block patterns). Each call may run
// a kernel on the job's stream the first time.
class operand_facts {
 public:
  virtual ~operand_facts() = default;
  virtual const planner::row_stats& a_rows() const = 0;
  virtual const planner::row_stats& b_rows() const = 0;
  // The size of the dense blocks A and B share (planner/block_structure.hpp), 1 where none.
  virtual int block_size() const = 0;
};

struct table;

// The mask of a masked product C<M> = A * B (or C<!M>): M's structure and,
// for a value mask, its values converted to C's value type (nullptr: a
// structural mask). No row offsets: the product has no mask.
struct job_mask {
  cuda::structure_view m;
  const void* values = nullptr;
  bool complement = false;

  bool present() const { return m.row_offsets != nullptr; }
};

// One product C = A * B as a method sees it, for its estimate and its run.
// A and B are valid CSR (columns sorted and unique within each row) with
// a.cols == b.rows.
struct job {
  cuda::structure_view a;
  cuda::structure_view b;
  std::size_t value_bytes = 0;  // of C, and of the operands run() gets
  const spgemm::tuning& tuning;
  const operand_facts& facts;
  // The methods, for a method that runs another on a derived product.
  const table& methods;
  // Every allocation comes from here: in the estimate the device's, in the
  // run the job's own, capped at its estimate.
  cuda::memory_resource& memory;
  cudaStream_t stream;
  const cancel_token& cancel;  // polled between phases
  // C = A (+).(x) B over it; plus_times unless the method's row takes semirings.
  spgemm::semiring semiring = {};
  // None unless the method's row takes masks.
  job_mask mask = {};
};

template <typename T>
using run_fn = cuda::device_csr<T> (*)(const job&, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

// The numeric phase alone of a product whose structure is known (the
// structure `s` of a product of operands with these patterns, its longest
// row `longest_row`): C's arrays allocated (rows, cols and nnz of s), every
// one of them written. Every method gives C the structure of the CPU
// reference, so one numeric pass serves them all (the table's); a method may
// have its own (its row's), for the products it would run.
template <typename T>
using numeric_fn = void (*)(const job&, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                            const cuda::structure_view& s, std::int64_t longest_row, cuda::device_csr<T>& c);

// A numeric phase: its workspace (C not included) and its run.
struct numeric_pass {
  memory_estimate (*estimate)(const job&, const cuda::structure_view& s) = nullptr;
  numeric_fn<float> run_f32 = nullptr;
  numeric_fn<double> run_f64 = nullptr;

  bool present() const { return estimate != nullptr; }

  template <typename T>
  void run(const job& j, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const cuda::structure_view& s,
           std::int64_t longest_row, cuda::device_csr<T>& c) const {
    if constexpr (std::is_same_v<T, float>) {
      run_f32(j, a, b, s, longest_row, c);
    } else {
      run_f64(j, a, b, s, longest_row, c);
    }
  }
};

// A row of the table of methods.
struct method {
  algorithm algo;
  // What run() allocates at most (memory_estimate::total(): its output bound
  // and workspace), the work and the method's plan in words. May run kernels
  // (statistics) on job.stream; allocates only what it frees before it returns.
  memory_estimate (*estimate)(const job&);
  // C, complete on job.stream, with sorted unique columns and the structure
  // of the CPU reference (entries that cancel to zero kept).
  run_fn<float> run_f32;
  run_fn<double> run_f64;
  // Whether run() takes any semiring (job.semiring), or plus-times only.
  bool semirings = false;
  // Whether run() takes a mask (job.mask), and whether it runs masked products only.
  bool masks = false;
  bool masked_only = false;
  // Its own numeric phase, where it has one (none: the table's).
  numeric_pass numeric = {};

  template <typename T>
  cuda::device_csr<T> run(const job& j, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) const {
    if constexpr (std::is_same_v<T, float>) {
      return run_f32(j, a, b);
    } else {
      return run_f64(j, a, b);
    }
  }
};

// The methods a backend runs.
struct table {
  const method* first = nullptr;
  const method* last = nullptr;
  // The numeric phase on a known structure of any method's product.
  numeric_pass numeric;

  // The method of `algo`; throws error(bad_input) where there is none.
  const method& find(algorithm algo) const {
    for (const method* m = first; m != last; ++m) {
      if (m->algo == algo) return *m;
    }
    throw_bad_input("algorithm '" + std::string(to_string(algo)) + "' does not run on a GPU" +
                    (algo == algorithm::gustavson ? ": it runs on the CPU backend only" : ""));
  }
};

}  // namespace spgemm::method
