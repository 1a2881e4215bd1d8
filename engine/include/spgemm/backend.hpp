// Where matrices live and products run: one backend per GPU, or the CPU.
//
// A backend stores matrices (device memory for a GPU, host memory for the
// CPU) and runs products on stored matrices, so chains such as A*A*A never
// leave the device. Every method is safe to call from several threads at
// once; a GPU backend runs each call on a stream of its own and draws device
// memory from one stream-ordered pool per device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spgemm/csr.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm {

namespace amg {
class operations;
}

// A matrix held by a backend. Freed when the last reference goes.
class stored_matrix {
 public:
  virtual ~stored_matrix() = default;
  virtual matrix_info info() const = 0;
};

struct backend_memory {
  std::size_t total_bytes = 0;    // device (or host) memory in all
  std::size_t free_bytes = 0;     // free now, as the driver (or OS) reports it
  std::size_t in_use_bytes = 0;   // allocated through this backend now
  std::size_t peak_bytes = 0;     // the most allocated at once since reset_peak()
  std::size_t cached_bytes = 0;   // freed, held for reuse beyond in_use (a device pool; release_idle)
};

// Host arrays a matrix is being received into (an upload), indexed as the
// whole matrix: row_offsets[0 .. rows] (absolute), col_indices and values
// [0 .. nnz), the values of the matrix's value type.
struct host_csr_arrays {
  const offset_t* row_offsets = nullptr;
  const index_t* col_indices = nullptr;
  const void* values = nullptr;
};

// Host arrays a matrix is copied into whole (backend::fetch_into_pinned):
// row_offsets[0 .. rows] (from 0), col_indices and values [0 .. nnz), the
// values of the matrix's value type.
struct host_csr_targets {
  offset_t* row_offsets = nullptr;
  index_t* col_indices = nullptr;
  void* values = nullptr;
};

// Stores a matrix while its rows still arrive, so that copying it in
// overlaps receiving the rest (backend::open_writer). Rows are written in
// order; the arrays must stay where they are, and the rows written must not
// change, until finish() or destruction. One thread at a time.
class matrix_writer {
 public:
  matrix_writer(const matrix_info& info, const host_csr_arrays& arrays) : info_(info), arrays_(arrays) {}
  virtual ~matrix_writer() = default;
  matrix_writer(const matrix_writer&) = delete;
  matrix_writer& operator=(const matrix_writer&) = delete;

  // Copies the rows after those written before, up to `row_end`, with their
  // entries; row_offsets[row_end] must have arrived.
  void write(std::int64_t row_end);
  std::int64_t rows_written() const { return rows_written_; }
  // Once every row was written: the stored matrix.
  virtual std::shared_ptr<stored_matrix> finish() = 0;

 protected:
  // Offsets row_begin .. row_end (both included) and the entries between them.
  virtual void copy(std::int64_t row_begin, std::int64_t row_end) = 0;
  // Throws error(bad_input) unless every row was written.
  void require_complete() const;

  const matrix_info info_;
  const host_csr_arrays arrays_;

 private:
  std::int64_t rows_written_ = 0;
  bool started_ = false;  // row_offsets[0] was copied
};

// An allocation of another process's device memory opened by CUDA IPC:
// `bytes` from `base`, mapped until the last reference goes (backend::open_ipc).
struct ipc_mapping {
  virtual ~ipc_mapping() = default;
  char* base = nullptr;
  std::size_t bytes = 0;
};

// Device memory of another process on this host, by CUDA IPC: the 64 bytes
// of its allocation's cudaIpcMemHandle_t, and bytes [offset, offset + length)
// from the allocation's base; or, where `mapped` is given (a client's
// registered device region), [offset, offset + length) of that mapping, and
// no handle.
struct ipc_array {
  std::string handle;
  std::size_t offset = 0;
  std::size_t length = 0;
  std::shared_ptr<const ipc_mapping> mapped;
};

// A CSR matrix's arrays in such memory: row offsets (int64, from 0), columns
// (int32), values (of the matrix's value type).
struct ipc_csr_arrays {
  ipc_array row_offsets, col_indices, values;
};

// Row offsets of a whole matrix at rows 0, stride, 2 stride, ... and at its
// end, as backend::sample_row_offsets answers (src/backends.cpp).
std::vector<offset_t> sampled_row_offsets(const std::vector<offset_t>& row_offsets, std::int64_t stride);

class backend {
 public:
  virtual ~backend() = default;

  virtual std::string name() const = 0;         // "cpu", "cuda:0", ...
  virtual std::string description() const = 0;  // e.g. "NVIDIA H100 80GB HBM3, 79.1 GiB"
  virtual bool is_gpu() const = 0;
  virtual backend_memory memory() const = 0;
  virtual void reset_peak() = 0;
  // Gives memory held for reuse back to the driver and the OS, down to
  // keep_bytes (device pools, pinned host staging); for when no job runs.
  virtual void release_idle(std::size_t keep_bytes) { (void)keep_bytes; }

  // Copies a host matrix in. The matrix must be valid (see validate.hpp).
  virtual std::shared_ptr<stored_matrix> store(const any_csr& m) = 0;
  // A writer that stores the matrix `info` as its rows arrive in `arrays`.
  virtual std::unique_ptr<matrix_writer> open_writer(const matrix_info& info, const host_csr_arrays& arrays) = 0;
  // Rows [row_begin, row_end) of a stored matrix, offsets rebased to 0.
  virtual any_csr fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) = 0;
  any_csr fetch(const stored_matrix& m) { return fetch(m, 0, m.info().rows); }
  // A stored matrix's row offsets at rows 0, stride, 2 stride, ... and at
  // its end (rows / stride rounded up, plus one, of them; stride >= 1): how
  // its entries spread over its rows, without copying them. A fetch of the
  // whole matrix by default (src/backends.cpp).
  virtual std::vector<offset_t> sample_row_offsets(const stored_matrix& m, std::int64_t stride);
  // The same rows handed to `sink` in pieces instead of one host copy: where
  // the matrix lives off the host, each piece as it arrives in the backend's
  // staging memory, so that nothing of the size of the rows is allocated.
  // The default fetches, then hands over the copy's arrays.
  virtual void fetch_to(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink);
  // Appends rows [row_begin, row_end) of a stored matrix to the host matrix
  // `out` (of its value type and columns; out's rows and offsets grow, its
  // arrays reserved for them first): a result gathered on the host panel by
  // panel, each entry copied once into memory never zeroed.
  virtual void append_rows(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, any_csr& out) = 0;

  // Bytes the product will allocate (output and workspace), before running it.
  virtual memory_estimate estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                            const multiply_options& options) = 0;
  // C = A * B, stored on this backend, holding at most `memory_limit` bytes
  // at once: the product's estimate_multiply(...).total(), as the caller
  // admitted it. An allocation beyond it throws error(does_not_fit) naming
  // the method and both numbers: the estimate is a promise the engine keeps.
  // Polls `cancel` between phases. `peak_bytes`, where given, receives the
  // most the product held at once.
  virtual std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                                  const multiply_options& options, std::size_t memory_limit,
                                                  const cancel_token& cancel = {},
                                                  std::size_t* peak_bytes = nullptr) = 0;
  // The same within the product's own estimate (estimated first).
  std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                          const multiply_options& options, const cancel_token& cancel = {}) {
    return multiply(a, b, options, estimate_multiply(a, b, options).total(), cancel);
  }
  // C<M> = A * B, or C<!M> (mask_options), over options.semiring: M is
  // rows(A) x cols(B) and stored here; only the entries M allows are ever
  // accumulated. Sized and held to its limit as multiply is. A backend
  // without masked products throws error(bad_input) saying so.
  virtual memory_estimate estimate_masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                   const stored_matrix& mask, const mask_options& how,
                                                   const multiply_options& options);
  virtual std::shared_ptr<stored_matrix> masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                         const stored_matrix& mask, const mask_options& how,
                                                         const multiply_options& options, std::size_t memory_limit,
                                                         const cancel_token& cancel = {},
                                                         std::size_t* peak_bytes = nullptr);
  // A step between products (matrix_ops.hpp) on matrices stored here, its
  // operands as operand_count(op) says: sized first, then run within its
  // limit as multiply is. A backend without them throws error(bad_input).
  virtual memory_estimate estimate_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands);
  virtual std::shared_ptr<stored_matrix> run_op(const matrix_op& op,
                                                const std::vector<const stored_matrix*>& operands,
                                                std::size_t memory_limit, const cancel_token& cancel = {},
                                                std::size_t* peak_bytes = nullptr);
  // The transpose, stored on this backend, within its (exact) estimate as
  // multiply keeps its limit; `peak_bytes` as there.
  virtual std::shared_ptr<stored_matrix> transpose(const stored_matrix& a, const cancel_token& cancel = {},
                                                   std::size_t* peak_bytes = nullptr) = 0;
  virtual memory_estimate estimate_transpose(const stored_matrix& a) = 0;

  // Stores a matrix of `info` from another process's device memory, device to
  // device, checked on the device (valid CSR, else error(bad_input)); each
  // array exactly the matrix's. GPU backends only: the others throw
  // error(bad_input) (gpu/ipc_transfer.cpp on CUDA; src/backends.cpp elsewhere).
  virtual std::shared_ptr<stored_matrix> store_from_ipc(const matrix_info& info, const ipc_csr_arrays& arrays);
  // Copies a stored matrix into another process's device memory, device to
  // device; each array at least the matrix's. GPU backends only, as above.
  virtual void fetch_into_ipc(const stored_matrix& m, const ipc_csr_arrays& arrays);
  // Opens the allocation of the CUDA IPC handle `handle` (its 64 bytes), or
  // shares the mapping this backend has open already, and keeps it open
  // while the result lives: a client's device region, registered once and
  // named by many calls, opened once. GPU backends only, as above; error(bad_input)
  // for a handle the driver cannot open.
  virtual std::shared_ptr<const ipc_mapping> open_ipc(const std::string& handle);
  // Host memory (mapped pages, such as a client's shared-memory region) that
  // the device's copy engines write into directly, pinned until unpin_host:
  // false where it is not (a host backend; memory the driver cannot pin).
  // The copies into it never go through the host's CPU, so that pages taken
  // away meanwhile (a shared-memory object shrunk by its owner) fault no one.
  virtual bool pin_host(void* p, std::size_t bytes);
  virtual void unpin_host(void* p);
  // A whole stored matrix copied into pinned memory (pin_host), device to
  // host, no staging; error(bad_input) where a target is not pinned memory.
  virtual void fetch_into_pinned(const stored_matrix& m, const host_csr_targets& to);
  // Stores the matrix `info` from arrays in pinned memory (pin_host), host to
  // device by the copy engines alone, checked on the device as an IPC upload
  // is (the owner of the memory may change it at any time: only the copy is
  // checked and kept); error(bad_input) where an array is not pinned memory.
  virtual std::shared_ptr<stored_matrix> store_from_pinned(const matrix_info& info, const host_csr_arrays& arrays);
  // New values for a stored matrix's pattern: `values` holds nnz values of
  // its value type, in its entries' order. write_values overwrites them in
  // place (the caller makes sure nothing reads the matrix meanwhile: its
  // pattern, and what is kept of it, stay valid); with_values stores a new
  // matrix with the pattern and these values. Throws error(bad_input) on a
  // backend that has neither (the defaults).
  virtual void write_values(stored_matrix& m, const void* values);
  virtual std::shared_ptr<stored_matrix> with_values(const stored_matrix& m, const void* values);

  // The numeric phase alone of C = A * B, on the structure of `structure`:
  // a product this backend gave for operands with the patterns of A and B
  // and these options (cusparseSpGEMMreuse's idea: operands changed only in
  // value). C is a new matrix with that structure, at most `memory_limit`
  // bytes held (estimate_multiply_numeric(...).total(): C exactly and the
  // numeric phase's workspace). A structure of another product gives wrong
  // values, not an error, unless its shape differs (bad_input).
  virtual memory_estimate estimate_multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                    const stored_matrix& structure, const multiply_options& options);
  virtual std::shared_ptr<stored_matrix> multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                          const stored_matrix& structure,
                                                          const multiply_options& options, std::size_t memory_limit,
                                                          const cancel_token& cancel = {},
                                                          std::size_t* peak_bytes = nullptr);

  // The building blocks of algebraic multigrid on this backend
  // (spgemm/amg.hpp runs its setup and solve on them); the default throws
  // error(bad_input).
  virtual std::unique_ptr<amg::operations> amg_operations();
  // Rows [row_begin, row_end) of `m` as a matrix of its own stored here,
  // offsets rebased to 0. `m` may be stored on another backend of this kind:
  // from another GPU the copy goes peer-to-peer, never through the host.
  // A row panel of A for a product too large for one device, or B copied to
  // every device a product is split over.
  virtual std::shared_ptr<stored_matrix> copy_rows(const stored_matrix& m, std::int64_t row_begin,
                                                   std::int64_t row_end) = 0;
  std::shared_ptr<stored_matrix> copy(const stored_matrix& m) { return copy_rows(m, 0, m.info().rows); }
  // The work of each row of A in A * B (both stored here), to cut A into row
  // panels. A GPU holds 16 bytes per row of A while it runs.
  virtual row_work work_per_row(const stored_matrix& a, const stored_matrix& b) = 0;
};

// Number of usable CUDA devices: 0 where the engine was built without CUDA,
// no driver is loaded, or no GPU is visible.
int cuda_device_count();

// The algorithms a CUDA backend runs: "auto", then its table of methods
// (rmerge, hash, esc, block); empty where the engine was built without CUDA.
std::vector<algorithm> cuda_algorithms();
// The same for masked products (auto, esc, dot).
std::vector<algorithm> cuda_masked_algorithms();

// The CPU backend; `threads` 0 means one per hardware thread. Named "cpu",
// or "cpu:<index>" for index > 0: several stand in for several devices
// (tests of placement and of products split over devices).
std::shared_ptr<backend> make_cpu_backend(int threads = 0, int index = 0);
// The backend of CUDA device `ordinal`. Throws error(device_failure) where
// there is no such device.
std::shared_ptr<backend> make_cuda_backend(int ordinal);

// The backends of these CUDA devices, in that order, each able to read the
// others' memory directly where the devices allow it (peer access), so that
// copy_rows between them goes peer-to-peer. Throws error(device_failure)
// where a device is missing or the engine was built without CUDA.
std::vector<std::shared_ptr<backend>> open_cuda_backends(const std::vector<int>& ordinals);

// The embedded default: every visible GPU, or the CPU backend where none is.
std::vector<std::shared_ptr<backend>> open_default_backends();

}  // namespace spgemm
