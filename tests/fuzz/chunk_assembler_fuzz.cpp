// Fuzzes the chunk assembler (proto/wire: a MatrixHeader, then chunks, into
// CSR arrays, checked as they arrive): headers of any field values, then
// chunks, each either well formed (rows in order, offsets and sorted columns
// made from the input) or bent (any row_begin and row_count, arrays of any
// bytes), split into pieces at any byte as gRPC's slices split them. It must
// never read or write out of bounds, and a matrix it finishes must be valid
// CSR of the header's shape and nnz.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "spgemm/validate.hpp"
#include "wire/chunk_codec.hpp"

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

template <typename T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// `bytes` split into pieces at points the input picks.
std::vector<std::string_view> split(FuzzedDataProvider& in, const std::string& bytes) {
  std::vector<std::string_view> pieces;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t n = in.ConsumeBool() ? bytes.size() - at : in.ConsumeIntegralInRange<std::size_t>(1, bytes.size() - at);
    pieces.emplace_back(bytes.data() + at, n);
    at += n;
  }
  return pieces;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  v1::MatrixHeader h;
  h.set_rows(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 300) : in.ConsumeIntegral<int64_t>());
  h.set_cols(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 300) : in.ConsumeIntegral<int64_t>());
  h.set_nnz(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-1, 3000) : in.ConsumeIntegral<int64_t>());
  h.set_value_type(static_cast<v1::ValueType>(in.ConsumeIntegralInRange<int>(0, 3)));
  h.set_index_type(static_cast<v1::IndexType>(in.ConsumeIntegralInRange<int>(0, 3)));
  if (!wire::chunk_assembler::check_header(h).ok()) return 0;
  // What the server's budget check stands for: no claim it could not hold.
  if (h.rows() > 4096 || h.nnz() > 1 << 16) return 0;
  const std::size_t value_bytes = wire::value_size(h.value_type());

  wire::chunk_assembler a(h, /*check_columns=*/true);
  int64_t rows = 0, nnz = 0;  // as the well-formed chunks go
  while (in.remaining_bytes() > 0) {
    wire::chunk_pieces c;
    std::string offsets, cols, values;
    if (in.ConsumeIntegralInRange<int>(0, 9) < 7) {
      const int64_t count = in.ConsumeIntegralInRange<int64_t>(1, std::max<int64_t>(1, h.rows() - rows));
      std::vector<int64_t> o = {0};
      std::vector<int32_t> k;
      for (int64_t r = 0; r < count; ++r) {
        int32_t col = in.ConsumeIntegralInRange<int32_t>(-1, 3);
        const auto length = in.ConsumeIntegralInRange<int64_t>(0, 8);
        for (int64_t e = 0; e < length; ++e, col += in.ConsumeIntegralInRange<int32_t>(0, 40)) k.push_back(col);
        o.push_back(static_cast<int64_t>(k.size()));
      }
      c.row_begin = rows;
      c.row_count = count;
      offsets = raw(o);
      cols = raw(k);
      values.assign(k.size() * value_bytes, '\x3f');
      rows += count;
      nnz += static_cast<int64_t>(k.size());
    } else {
      c.row_begin = in.ConsumeIntegral<int64_t>();
      c.row_count = in.ConsumeIntegral<int64_t>();
      offsets = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<std::size_t>(0, 128));
      cols = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<std::size_t>(0, 128));
      values = in.ConsumeBytesAsString(in.ConsumeIntegralInRange<std::size_t>(0, 256));
    }
    c.row_offsets = split(in, offsets);
    c.col_indices = split(in, cols);
    c.values = split(in, values);
    if (!a.add(c).ok()) return 0;
  }
  if (!a.finish().ok()) return 0;

  spgemm::csr_matrix<double> m;
  m.rows = h.rows();
  m.cols = h.cols();
  m.row_offsets = a.row_offsets();
  m.col_indices = a.col_indices();
  m.values.assign(m.col_indices.size(), 1.0);
  const std::size_t held = h.value_type() == v1::FLOAT32 ? a.values_f32().size() : a.values_f64().size();
  if (!spgemm::find_csr_problem(m).empty() || m.nnz() != h.nnz() || held != m.col_indices.size()) __builtin_trap();
  return 0;
}
