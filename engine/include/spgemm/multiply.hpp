// Options, statistics and memory estimates of a sparse product C = A * B.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spgemm/csr.hpp"
#include "spgemm/semiring.hpp"
#include "spgemm/tuning.hpp"

namespace spgemm {

enum class algorithm {
  automatic,  // "auto": the backend's best method for the operands
  gustavson,  // "gustavson": CPU, row-wise dense accumulator (the test oracle)
  rmerge,     // "rmerge": GPU, iterative row merging by sub-warps (Gremse et al. 2015)
  hash,       // "hash": GPU, per-bin hash accumulators in shared memory, dense rows in global memory
  esc,        // "esc": GPU, expand-sort-compress on row slices within a fixed workspace (Bell et al. 2012)
  block,      // "block": GPU, operands of dense b x b blocks (multi-dof FEM): symbolic on the block patterns,
              // numeric block by block; matrices without block structure run with b = 1 (correct, slow)
  dot,        // "dot": GPU, masked products C<M> only: one dot product per entry of M (B transposed first)
  dense,      // "dense": GPU, dense shared-memory accumulators over tiles of B's columns, rows split across a
              // thread-block cluster: rows of C dense in a narrow B (A * A^T of a wide A; correct for any B)
  bhsparse,   // "bhsparse": GPU, Liu & Vinter 2015: rows binned by their upper bound; heap method, bitonic ESC,
              // merge path for long rows; hybrid progressive allocation
  segmerge,   // "segmerge": GPU, bhsparse's bins with the long rows by Ji et al. 2020's segmented merge
};

std::string_view to_string(algorithm algo);
// Throws error(bad_input) listing the known names.
algorithm parse_algorithm(std::string_view name);
std::vector<std::string_view> algorithm_names();

struct multiply_options {
  algorithm algo = algorithm::automatic;
  // Value type of C. Unset: the wider of the operands' types. Operands are
  // converted to it before the product.
  std::optional<value_type> output_type;
  spgemm::tuning tuning;
  // C = A (+).(x) B; plus_times is the arithmetic product (semiring.hpp).
  spgemm::semiring semiring;
};

// The mask of a product C<M> = A * B (GraphBLAS's masked mxm into an empty
// C): C holds only the entries M allows, and the product accumulates only
// those (its accumulator is built from M's row), never the whole product
// filtered afterwards.
struct mask_options {
  bool complement = false;  // C<!M>: M's entries forbid instead
  bool structural = true;   // every entry of M counts; else only those of nonzero value
};

// What a product will take, computed before it runs. `output_bytes` bounds C;
// `workspace_bytes` bounds everything else the method allocates. The engine
// never allocates more than `total()` for the job. The estimate also names
// the work it was sized for and the method that will run.
struct memory_estimate {
  std::size_t output_bytes = 0;
  std::size_t workspace_bytes = 0;
  // The part of workspace_bytes that a product of any number of A's rows
  // needs (accumulators as wide as B, one per thread): a product cut into
  // row panels pays it in every panel.
  std::size_t fixed_workspace_bytes = 0;
  std::int64_t nnz_bound = 0;  // entries of C at most (their number, where exact)
  bool exact = false;  // true where nnz(C) is known, not only bounded
  std::int64_t products = 0;  // scalar multiplications (flops / 2); 0 for a transpose
  std::string method;         // e.g. "gustavson", "rmerge w8r4", "block b3, blocks by rmerge w8r4", "transpose"
  // The method that will run: the one asked for, or the planner's choice for
  // automatic (automatic where the backend does not say, and for a
  // transpose). A product cut into row panels runs every panel with it.
  algorithm algo = algorithm::automatic;

  std::size_t total() const { return output_bytes + workspace_bytes; }
};

// Work of a product, from the structures of A and B alone.
struct product_stats {
  std::int64_t products = 0;         // scalar multiplications: sum over a_ij of nnz(B row j)
  std::int64_t max_row_products = 0;
  // Sum over rows of min(products of the row, cols of B, the span of the
  // columns its rows of B reach); the span keeps the bound of a banded
  // product near nnz(C), where the products overcount it by half the band.
  std::int64_t nnz_c_bound = 0;
  std::int64_t max_row_length_a = 0;

  double flops() const { return 2.0 * static_cast<double>(products); }
};

// The work of each row of A in A * B: for cutting A into row panels that
// each fit a device with their product (backend::work_per_row).
struct row_work {
  std::vector<std::int64_t> entries;   // of the row of A
  std::vector<std::int64_t> products;  // scalar multiplications; the row of C has at most min(products, cols of B) entries
};

// Throws error(bad_input) when the inner dimensions differ.
void require_conformable(const matrix_info& a, const matrix_info& b);
// Throws error(bad_input) unless the mask is rows x cols (C's shape).
void require_mask_shape(const matrix_info& mask, std::int64_t rows, std::int64_t cols);

template <typename T, typename U>
product_stats compute_product_stats(const csr_matrix<T>& a, const csr_matrix<U>& b);
// The same for C<M> = A * B, M's row offsets given: no row of C holds more
// entries than M's row.
template <typename T, typename U>
product_stats compute_product_stats(const csr_matrix<T>& a, const csr_matrix<U>& b,
                                    const std::vector<offset_t>& mask_row_offsets);

template <typename T, typename U>
row_work compute_row_work(const csr_matrix<T>& a, const csr_matrix<U>& b);

// The value type of C for these operands and options.
value_type output_type_of(const matrix_info& a, const matrix_info& b, const multiply_options& options);

// A flag a job polls between its phases; the owner of the job sets it
// (a cancelled RPC, an expired deadline, shutdown).
class cancel_token {
 public:
  cancel_token() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { flag_->store(true); }
  bool cancelled() const { return flag_->load(); }
  // Throws error(cancelled) once cancel() was called.
  void throw_if_cancelled() const;

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace spgemm
