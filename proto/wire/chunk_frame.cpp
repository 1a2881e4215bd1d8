#include "wire/chunk_frame.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace spgemm::wire {

namespace {

// Protobuf wire types and the field numbers of MatrixChunk (spgemm.proto).
constexpr uint64_t wire_varint = 0, wire_fixed64 = 1, wire_bytes = 2, wire_fixed32 = 5;
constexpr uint64_t part_chunk = 2;  // UploadPart.chunk and ResultPart.chunk
constexpr uint64_t f_row_begin = 1, f_row_count = 2, f_row_offsets = 3, f_col_indices = 4, f_values = 5;

constexpr uint8_t key(uint64_t field, uint64_t type) { return static_cast<uint8_t>(field << 3 | type); }

std::size_t varint_size(uint64_t v) {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

uint8_t* put_varint(uint8_t* p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<uint8_t>(v | 0x80);
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// proto3 leaves fields at their default (0, empty) out; so do these.
std::size_t scalar_size(int64_t v) { return v == 0 ? 0 : 1 + varint_size(static_cast<uint64_t>(v)); }
std::size_t bytes_head_size(std::size_t n) { return n == 0 ? 0 : 1 + varint_size(n); }

uint8_t* put_scalar(uint8_t* p, uint64_t field, int64_t v) {
  if (v == 0) return p;
  *p++ = key(field, wire_varint);
  return put_varint(p, static_cast<uint64_t>(v));
}

uint8_t* put_bytes_head(uint8_t* p, uint64_t field, std::size_t n) {
  if (n == 0) return p;
  *p++ = key(field, wire_bytes);
  return put_varint(p, n);
}

uint8_t* put_offsets(uint8_t* p, const csr_view& m, int64_t row_begin, int64_t row_end) {
  const int64_t base = m.row_offsets[row_begin];
  for (int64_t r = row_begin; r <= row_end; ++r, p += sizeof(int64_t)) {
    const int64_t rebased = m.row_offsets[r] - base;
    std::memcpy(p, &rebased, sizeof(int64_t));
  }
  return p;
}

// A slice over `n` bytes at `data` that keeps `owner` alive until gRPC lets go of it.
grpc::Slice referenced(const void* data, std::size_t n, const std::shared_ptr<const void>& owner) {
  auto* hold = new std::shared_ptr<const void>(owner);
  return grpc::Slice(const_cast<void*>(data), n, [](void* h) { delete static_cast<std::shared_ptr<const void>*>(h); },
                     hold);
}

uint8_t* writable(grpc::Slice& s) { return const_cast<uint8_t*>(s.begin()); }

// Reads a message that lies in several slices, front to back.
class slice_reader {
 public:
  explicit slice_reader(const std::vector<grpc::Slice>& slices) : slices_(slices) {}

  std::size_t consumed() const { return consumed_; }

  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!next_nonempty()) return false;
      const uint8_t b = slices_[index_].begin()[offset_++];
      ++consumed_;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return true;
    }
    return false;
  }

  // The next n bytes, appended to `out` as pieces (skipped where null).
  bool take(uint64_t n, std::vector<std::string_view>* out) {
    while (n > 0) {
      if (!next_nonempty()) return false;
      const grpc::Slice& s = slices_[index_];
      const std::size_t here = std::min<uint64_t>(n, s.size() - offset_);
      if (out) out->emplace_back(reinterpret_cast<const char*>(s.begin()) + offset_, here);
      offset_ += here;
      consumed_ += here;
      n -= here;
    }
    return true;
  }

 private:
  bool next_nonempty() {
    while (index_ < slices_.size() && offset_ == slices_[index_].size()) {
      ++index_;
      offset_ = 0;
    }
    return index_ < slices_.size();
  }

  const std::vector<grpc::Slice>& slices_;
  std::size_t index_ = 0, offset_ = 0, consumed_ = 0;
};

}  // namespace

grpc::ByteBuffer encode_chunk(const csr_view& m, int64_t row_begin, int64_t row_end, int64_t first_row,
                              const std::shared_ptr<const void>& owner) {
  const int64_t count = row_end - row_begin;
  const int64_t base = m.row_offsets[row_begin];
  const auto nnz = static_cast<std::size_t>(m.row_offsets[row_end] - base);
  const std::size_t offset_bytes = static_cast<std::size_t>(count + 1) * sizeof(int64_t);
  const std::size_t col_bytes = nnz * sizeof(int32_t);
  const std::size_t vs = value_size(m.value_type);
  const std::size_t value_bytes = nnz * vs;
  const char* cols = reinterpret_cast<const char*>(m.col_indices + base);
  const char* values = static_cast<const char*>(m.values) + static_cast<std::size_t>(base) * vs;

  const std::size_t inner = scalar_size(first_row) + scalar_size(count) + bytes_head_size(offset_bytes) +
                            offset_bytes + bytes_head_size(col_bytes) + col_bytes + bytes_head_size(value_bytes) +
                            value_bytes;
  const std::size_t head = 1 + varint_size(inner) + scalar_size(first_row) + scalar_size(count) +
                           bytes_head_size(offset_bytes) + offset_bytes + bytes_head_size(col_bytes);
  auto write_head = [&](uint8_t* p) {
    *p++ = key(part_chunk, wire_bytes);
    p = put_varint(p, inner);
    p = put_scalar(p, f_row_begin, first_row);
    p = put_scalar(p, f_row_count, count);
    p = put_bytes_head(p, f_row_offsets, offset_bytes);
    p = put_offsets(p, m, row_begin, row_end);
    return put_bytes_head(p, f_col_indices, col_bytes);
  };

  if (!owner) {
    grpc::Slice all(head + col_bytes + bytes_head_size(value_bytes) + value_bytes);
    uint8_t* p = write_head(writable(all));
    if (col_bytes > 0) std::memcpy(p, cols, col_bytes);
    p = put_bytes_head(p + col_bytes, f_values, value_bytes);
    if (value_bytes > 0) std::memcpy(p, values, value_bytes);
    return grpc::ByteBuffer(&all, 1);
  }
  std::vector<grpc::Slice> slices;
  slices.emplace_back(head);
  write_head(writable(slices.back()));
  if (col_bytes > 0) slices.push_back(referenced(cols, col_bytes, owner));
  if (value_bytes > 0) {
    uint8_t values_head[16];
    const uint8_t* end = put_bytes_head(values_head, f_values, value_bytes);
    slices.emplace_back(values_head, static_cast<std::size_t>(end - values_head));
    slices.push_back(referenced(values, value_bytes, owner));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

bool decode_chunk(const grpc::ByteBuffer& message, std::vector<grpc::Slice>* slices, chunk_pieces* out) {
  slices->clear();
  if (!message.Dump(slices).ok()) return false;
  slice_reader in(*slices);
  // Exactly one field: the chunk.
  uint64_t k = 0, inner = 0;
  if (!in.varint(&k) || k != key(part_chunk, wire_bytes) || !in.varint(&inner)) return false;
  const std::size_t end = in.consumed() + inner;
  if (end != message.Length()) return false;

  *out = chunk_pieces{};
  while (in.consumed() < end) {
    if (!in.varint(&k)) return false;
    const uint64_t field = k >> 3, type = k & 7;
    // A known field in another wire type is left to protobuf.
    const uint64_t known_type = field <= f_row_count ? wire_varint : wire_bytes;
    if (field == 0 || (field <= f_values && type != known_type)) return false;
    uint64_t v = 0;
    switch (type) {
      case wire_varint:
        if (!in.varint(&v)) return false;
        if (field == f_row_begin) out->row_begin = static_cast<int64_t>(v);
        if (field == f_row_count) out->row_count = static_cast<int64_t>(v);
        break;
      case wire_bytes: {
        if (!in.varint(&v) || v > end - in.consumed()) return false;
        std::vector<std::string_view>* dst = field == f_row_offsets   ? &out->row_offsets
                                             : field == f_col_indices ? &out->col_indices
                                             : field == f_values      ? &out->values
                                                                      : nullptr;
        if (dst) dst->clear();  // the last occurrence wins, as in protobuf
        if (!in.take(v, dst)) return false;
        break;
      }
      case wire_fixed64:
        if (!in.take(8, nullptr)) return false;
        break;
      case wire_fixed32:
        if (!in.take(4, nullptr)) return false;
        break;
      default:
        return false;
    }
  }
  return in.consumed() == end;
}

}  // namespace spgemm::wire
