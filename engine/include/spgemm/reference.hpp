// The CPU methods, callable directly: the test oracle and the CPU backend.
#pragma once

#include "spgemm/csr.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/semiring.hpp"

namespace spgemm {

// C = A * B by Gustavson's method: rows split across `threads` threads (0: one
// per hardware thread) by their work, a dense accumulator per thread, columns
// of each output row sorted. Entries that cancel to zero are kept. The result
// does not depend on the thread count. Throws error(bad_input) on mismatched
// shapes.
template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, int threads = 0);
// The same, polling `cancel` about every 10^6 scalar products: throws
// error(cancelled) about a millisecond after it fires, however long the product.
template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, int threads, const cancel_token& cancel);

// C = A (+).(x) B over a semiring: an entry wherever a product is (kept where
// the sum is the monoid's identity), its value the first product, then
// add(.., product) for each next one in the order of A's entries: the
// structure and values SuiteSparse:GraphBLAS gives. Throws error(bad_input)
// on mismatched shapes or a semiring the engine does not run
// (check_semiring).
template <typename T>
csr_matrix<T> cpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const semiring& ring, int threads = 0);

// C<M> = A (+).(x) B, or C<!M> (mask_options): the same entries and values
// where the mask allows them, no others. M is rows(A) x cols(B), of either
// value type.
template <typename T, typename M>
csr_matrix<T> cpu_masked_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const csr_matrix<M>& mask,
                                  const mask_options& options, const semiring& ring = {}, int threads = 0);

// The transpose (CSR of A^T), columns sorted.
template <typename T>
csr_matrix<T> cpu_transpose(const csr_matrix<T>& a);

// Largest |C - ref| / (|A||B|)_ij over the entries of C, where |A||B| is the
// product of the absolute values: the error measure that stays meaningful
// where entries cancel. Returns +inf when the structures differ.
template <typename T>
double scaled_max_error(const csr_matrix<T>& c, const csr_matrix<T>& ref, const csr_matrix<T>& a,
                        const csr_matrix<T>& b);

}  // namespace spgemm
