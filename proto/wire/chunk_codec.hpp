// The chunk codec: a CSR matrix <-> MatrixHeader + row-block MatrixChunks.
//
// Shared by the server and the C++ client; depends on the generated proto
// code only (no engine). Arrays travel as raw little-endian bytes: row
// offsets int64 (rebased so each chunk's first is 0), column indices int32,
// values float32 or float64 as the header says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/support/status.h>

#include "spgemm/v1/spgemm.pb.h"

namespace spgemm::wire {

// A non-owning view of a host CSR matrix (row offsets start at 0).
struct csr_view {
  int64_t rows = 0, cols = 0, nnz = 0;
  const int64_t* row_offsets = nullptr;  // rows + 1 entries
  const int32_t* col_indices = nullptr;  // nnz entries
  const void* values = nullptr;          // nnz entries of value_type
  spgemm::v1::ValueType value_type = spgemm::v1::FLOAT64;
};

// Bytes per value: 4, 8, or 0 for an unknown type.
std::size_t value_size(spgemm::v1::ValueType type);

// 2 MiB: fewer, larger messages stream faster (per-message costs of gRPC and
// protobuf), well under the 4 MiB that gRPC receivers accept by default.
constexpr std::size_t default_chunk_bytes = 2 << 20;

// Bytes a chunk of rows [begin, end) takes on the wire (arrays only).
std::size_t chunk_payload_bytes(const csr_view& m, int64_t row_begin, int64_t row_end);

// Row blocks [begin, end) whose chunk messages stay under chunk_bytes (a
// single row larger than that gets a chunk of its own). A matrix with no rows
// gets no blocks.
std::vector<std::pair<int64_t, int64_t>> plan_row_blocks(const csr_view& m, std::size_t chunk_bytes);

// The chunk of rows [row_begin, row_end), offsets rebased to 0.
void fill_chunk(const csr_view& m, int64_t row_begin, int64_t row_end, spgemm::v1::MatrixChunk* out);

spgemm::v1::MatrixHeader header_of(const csr_view& m, const std::string& name = "");

// A chunk whose arrays may lie in several pieces of memory, as they arrive in
// a received gRPC message (chunk_frame.hpp); the pieces of an array are its
// bytes in order, split anywhere.
struct chunk_pieces {
  int64_t row_begin = 0;
  int64_t row_count = 0;
  std::vector<std::string_view> row_offsets, col_indices, values;
};

// The arrays a matrix is assembled into. Those of a finished matrix may be
// handed to the next assembler: their memory is mapped and written already,
// whereas writing fresh memory costs a page fault and a zeroed page per page,
// more than the copy itself.
struct csr_arrays {
  std::vector<int64_t> row_offsets;
  std::vector<int32_t> col_indices;
  std::vector<float> values_f32;
  std::vector<double> values_f64;

  std::size_t capacity_bytes() const;
};

class background_populate;  // wire/populate.hpp

// Assembles a matrix from a header and its chunks, checking order, sizes and
// offsets; grpc::Status INVALID_ARGUMENT with an actionable message on any
// problem. With `check_columns`, each chunk's columns are checked as it
// arrives (in range, sorted and unique within a row), so a matrix that
// finishes is valid CSR without a pass over the whole of it; the message of
// a bad column says "not valid CSR" and names the row, column and entry.
class chunk_assembler {
 public:
  // A result's header may say this nnz: not known until its last chunk (a
  // product computed in row panels); the arrays then grow as chunks come.
  static constexpr int64_t unknown_nnz = -1;

  // Negative dimensions or nnz (but unknown_nnz where `result`), an unknown
  // value type, a 64-bit index type, a shape the 32-bit column indices cannot
  // address.
  static grpc::Status check_header(const spgemm::v1::MatrixHeader& h, bool result = false);

  // Reserves the arrays for the header's nnz, in `reuse` where its arrays
  // are large enough: address space only, the memory is committed as chunks
  // fill it (a header's claim commits nothing). Fresh arrays of 32 MiB and
  // more are mapped a little ahead of the chunks on a thread of their own
  // (background_populate). Call check_header first; throws std::bad_alloc
  // where the address space is not there.
  explicit chunk_assembler(const spgemm::v1::MatrixHeader& h, bool check_columns = false, csr_arrays reuse = {});
  ~chunk_assembler();  // stops the mapping ahead before the arrays go

  grpc::Status add(const spgemm::v1::MatrixChunk& c);
  grpc::Status add(const chunk_pieces& c);
  // OK once every row and every nonzero arrived; then the arrays are
  // complete (and no longer mapped ahead): take them. A header of
  // unknown_nnz says the nnz that arrived from then on.
  grpc::Status finish();

  int64_t rows_received() const { return rows_received_; }
  int64_t nnz_received() const { return nnz_received_; }

  std::vector<int64_t>& row_offsets() { return arrays_.row_offsets; }
  std::vector<int32_t>& col_indices() { return arrays_.col_indices; }
  // The values, in the header's type (the other vector stays empty): take
  // them by move, no copy.
  std::vector<float>& values_f32() { return arrays_.values_f32; }
  std::vector<double>& values_f64() { return arrays_.values_f64; }
  const spgemm::v1::MatrixHeader& header() const { return header_; }

 private:
  // The columns of the chunk just appended: OK, or the first bad one.
  // `offsets` are the matrix's, rows + 1 of them from row row_begin.
  grpc::Status check_chunk_columns(int64_t row_begin, const int64_t* offsets, int64_t rows) const;
  // Lets the mapping ahead run a little past what arrived.
  void populate_ahead();

  spgemm::v1::MatrixHeader header_;
  std::size_t value_size_ = 0;
  bool check_columns_ = false;
  int64_t rows_received_ = 0;
  int64_t nnz_received_ = 0;
  csr_arrays arrays_;
  std::unique_ptr<background_populate> populate_;  // of arrays_; goes first
  double populate_window_ = 0;  // how far ahead of the chunks it maps, as a fraction of the arrays
  std::string offsets_scratch_;  // row offsets that arrived in several pieces
};

}  // namespace spgemm::wire
