// Chunk messages encoded and decoded by hand (wire/chunk_frame.hpp): the
// same bytes as protobuf's, arrays referenced while gRPC holds them, and
// decoding from slices split anywhere, or leaving the message to protobuf.
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <random>
#include <string>
#include <vector>

#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

struct host_csr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> col_idx;
  std::vector<double> values64;
  std::vector<float> values32;
  v1::ValueType type = v1::FLOAT64;
  wire::csr_view view() const {
    const void* v = type == v1::FLOAT64 ? static_cast<const void*>(values64.data()) : values32.data();
    return {rows, cols, static_cast<int64_t>(col_idx.size()), offsets.data(), col_idx.data(), v, type};
  }
};

// Rows of random length, some empty.
host_csr random_csr(int64_t rows, int64_t cols, unsigned seed, v1::ValueType type) {
  std::mt19937 rng(seed);
  host_csr m;
  m.rows = rows;
  m.cols = cols;
  m.type = type;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t len = static_cast<int64_t>(rng() % 9);
    for (int64_t k = 0; k < len && k < cols; ++k) {
      m.col_idx.push_back(static_cast<int32_t>(k * 3 % cols));
      m.values64.push_back(static_cast<double>(rng() % 1000) / 7.0);
      m.values32.push_back(static_cast<float>(rng() % 1000) / 7.0f);
    }
    m.offsets.push_back(static_cast<int64_t>(m.col_idx.size()));
  }
  return m;
}

std::string bytes_of(const grpc::ByteBuffer& b) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(b.Dump(&slices).ok());
  std::string s;
  for (const auto& x : slices) s.append(reinterpret_cast<const char*>(x.begin()), x.size());
  return s;
}

// `bytes` as a received message would hold them: in slices of `piece` bytes.
grpc::ByteBuffer split(const std::string& bytes, std::size_t piece) {
  std::vector<grpc::Slice> slices;
  for (std::size_t i = 0; i < bytes.size(); i += piece) {
    slices.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// What protobuf writes for the chunk of rows [b, e) labelled `first_row`.
std::string protobuf_chunk(const host_csr& m, int64_t b, int64_t e, int64_t first_row) {
  v1::ResultPart part;
  wire::fill_chunk(m.view(), b, e, part.mutable_chunk());
  part.mutable_chunk()->set_row_begin(first_row);
  return part.SerializeAsString();
}

}  // namespace

TEST(chunk_frame, encodes_what_protobuf_writes) {
  for (v1::ValueType type : {v1::FLOAT64, v1::FLOAT32}) {
    const host_csr m = random_csr(300, 50, 3, type);
    for (auto [b, e] : wire::plan_row_blocks(m.view(), 1024)) {
      for (int64_t first_row : {b, b + 1000000007}) {
        const std::string want = protobuf_chunk(m, b, e, first_row);
        EXPECT_EQ(bytes_of(wire::encode_chunk(m.view(), b, e, first_row)), want);
        auto owner = std::make_shared<int>(0);
        EXPECT_EQ(bytes_of(wire::encode_chunk(m.view(), b, e, first_row, owner)), want);
      }
    }
  }
}

TEST(chunk_frame, rows_without_nonzeros) {
  host_csr m;
  m.rows = 3;
  m.cols = 4;
  m.offsets = {0, 0, 0, 0};
  EXPECT_EQ(bytes_of(wire::encode_chunk(m.view(), 0, 3, 0)), protobuf_chunk(m, 0, 3, 0));
  EXPECT_EQ(bytes_of(wire::encode_chunk(m.view(), 1, 3, 1, std::make_shared<int>(0))), protobuf_chunk(m, 1, 3, 1));
}

TEST(chunk_frame, referenced_arrays_keep_their_owner_until_released) {
  const host_csr m = random_csr(100, 20, 5, v1::FLOAT64);
  auto owner = std::make_shared<int>(0);
  std::weak_ptr<int> watch = owner;
  {
    grpc::ByteBuffer message = wire::encode_chunk(m.view(), 0, 100, 0, owner);
    owner.reset();
    EXPECT_FALSE(watch.expired());
    grpc::ByteBuffer copy(message);
    message.Clear();
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_TRUE(watch.expired());
}

TEST(chunk_frame, decodes_from_slices_split_anywhere) {
  for (v1::ValueType type : {v1::FLOAT64, v1::FLOAT32}) {
    const host_csr m = random_csr(400, 60, 11, type);
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{4096}}) {
      wire::chunk_assembler a(wire::header_of(m.view()));
      std::vector<grpc::Slice> slices;
      wire::chunk_pieces pieces;
      for (auto [b, e] : wire::plan_row_blocks(m.view(), 2048)) {
        ASSERT_TRUE(wire::decode_chunk(split(protobuf_chunk(m, b, e, b), piece), &slices, &pieces));
        EXPECT_EQ(pieces.row_begin, b);
        EXPECT_EQ(pieces.row_count, e - b);
        ASSERT_TRUE(a.add(pieces).ok());
      }
      ASSERT_TRUE(a.finish().ok());
      EXPECT_EQ(a.row_offsets(), m.offsets);
      EXPECT_EQ(a.col_indices(), m.col_idx);
      if (type == v1::FLOAT64) {
        EXPECT_EQ(a.values_f64(), m.values64);
      } else {
        EXPECT_EQ(a.values_f32(), m.values32);
      }
    }
  }
}

TEST(chunk_frame, other_messages_are_left_to_protobuf) {
  std::vector<grpc::Slice> slices;
  wire::chunk_pieces pieces;
  auto decodes = [&](const std::string& bytes) { return wire::decode_chunk(split(bytes, 5), &slices, &pieces); };

  v1::UploadPart header;
  header.mutable_header()->set_rows(3);
  EXPECT_FALSE(decodes(header.SerializeAsString()));
  v1::ResultPart stats;
  stats.mutable_stats()->set_nnz(3);
  EXPECT_FALSE(decodes(stats.SerializeAsString()));
  EXPECT_FALSE(decodes(""));

  const host_csr m = random_csr(10, 5, 1, v1::FLOAT64);
  const std::string chunk = protobuf_chunk(m, 0, 10, 0);
  EXPECT_TRUE(decodes(chunk));
  EXPECT_FALSE(decodes(chunk.substr(0, chunk.size() - 1)));  // truncated
  EXPECT_FALSE(decodes(chunk + chunk));                       // two parts: protobuf merges them
}

TEST(chunk_frame, unknown_and_repeated_fields_read_as_protobuf_reads_them) {
  // A chunk with an unknown field of each wire type, and row_count and
  // col_indices twice (the last occurrence wins).
  v1::MatrixChunk c;
  c.set_row_begin(5);
  c.set_row_count(99);
  c.set_row_offsets(std::string(16, '\0'));
  c.set_col_indices("ignored!");
  std::string inner = c.SerializeAsString();
  inner += std::string("\x30\x96\x01", 3);                 // field 6, varint 150
  inner += std::string("\x39", 1) + std::string(8, 'x');   // field 7, fixed64
  inner += std::string("\x45", 1) + std::string(4, 'y');   // field 8, fixed32
  inner += std::string("\x4a\x02zz", 4);                   // field 9, 2 bytes
  inner += std::string("\x10\x01", 2);                     // row_count = 1
  inner += std::string("\x22\x04", 2) + std::string("\x02\x00\x00\x00", 4);  // col_indices
  const std::string outer = std::string("\x12", 1) + static_cast<char>(inner.size()) + inner;

  v1::ResultPart parsed;
  ASSERT_TRUE(parsed.ParseFromString(outer));
  std::vector<grpc::Slice> slices;
  wire::chunk_pieces pieces;
  ASSERT_TRUE(wire::decode_chunk(split(outer, 3), &slices, &pieces));
  auto joined = [](const std::vector<std::string_view>& p) {
    std::string s;
    for (auto v : p) s += v;
    return s;
  };
  EXPECT_EQ(pieces.row_begin, parsed.chunk().row_begin());
  EXPECT_EQ(pieces.row_count, parsed.chunk().row_count());
  EXPECT_EQ(joined(pieces.row_offsets), parsed.chunk().row_offsets());
  EXPECT_EQ(joined(pieces.col_indices), parsed.chunk().col_indices());
  EXPECT_EQ(joined(pieces.values), parsed.chunk().values());
}
