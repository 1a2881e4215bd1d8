// The catalogue of bad requests: each malformed, inconsistent, oversized or
// undecodable request gets its own status and a message that names the
// problem, loses nothing (no reservation left, no matrix added or lost) and
// leaves the server serving.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemmd_child.hpp"

namespace spgemm::attack {
namespace {

namespace v1 = spgemm::v1;
using code = grpc::StatusCode;

struct bad_request {
  std::string name;
  std::function<grpc::Status()> send;
  code expected;
  std::string says;  // a part of the message
};

const std::string unknown = "m-0123456789abcdef0123456789abcdef";
const std::string undecodable = "\xff\xff\xff\xff";  // field 0x1fffffff... of wire type 7: no message

TEST(bad_requests, each_gets_its_status_and_loses_nothing) {
  spgemmd_child server({});
  ASSERT_TRUE(server.ok()) << server.log();
  auto& stub = server.stub();
  const auto channel = server.channel();
  const csr a = spgemm::generate("poisson2d5:10");  // 100 x 100, 460 entries
  const csr small = spgemm::generate("poisson2d5:5");  // 25 x 25
  const std::string ha = upload(stub, a), hs = upload(stub, small);
  ASSERT_FALSE(ha.empty());
  ASSERT_FALSE(hs.empty());
  const v1::ServerStatus before = server_status(stub);

  // Uploads: the header, then its chunks (of about 512 bytes).
  v1::UploadPart header;
  *header.mutable_header() = header_of(a);
  const std::vector<v1::UploadPart> chunks = chunks_of(a, 512);
  ASSERT_GE(chunks.size(), 3u);
  auto with_header = [&](const std::function<void(v1::MatrixHeader&)>& change) {
    v1::UploadPart h = header;
    change(*h.mutable_header());
    return std::vector<v1::UploadPart>{h};
  };
  auto with_chunk = [&](const std::function<void(v1::MatrixChunk&)>& change) {
    std::vector<v1::UploadPart> parts = {header};
    parts.insert(parts.end(), chunks.begin(), chunks.end());
    change(*parts[1].mutable_chunk());
    return parts;
  };
  // A chunk's raw arrays, to bend.
  auto offsets = [](const v1::MatrixChunk& c) {
    std::vector<int64_t> o(c.row_offsets().size() / 8);
    std::memcpy(o.data(), c.row_offsets().data(), c.row_offsets().size());
    return o;
  };
  auto set_offsets = [](v1::MatrixChunk& c, const std::vector<int64_t>& o) {
    c.set_row_offsets(std::string(reinterpret_cast<const char*>(o.data()), o.size() * 8));
  };
  auto set_column = [](v1::MatrixChunk& c, std::size_t k, int32_t col) {
    std::memcpy(c.mutable_col_indices()->data() + 4 * k, &col, 4);
  };
  auto column = [](const v1::MatrixChunk& c, std::size_t k) {
    int32_t col = 0;
    std::memcpy(&col, c.col_indices().data() + 4 * k, 4);
    return col;
  };
  auto up = [&](std::vector<v1::UploadPart> parts) { return [&stub, parts] { return upload_parts(stub, parts); }; };

  // Products and the rest, by the generated stub or as raw bytes.
  auto product = [&](v1::MultiplyRequest req) { return [&stub, req] {
    grpc::ClientContext ctx;
    auto reader = stub.Multiply(&ctx, req);
    return read_result(*reader).status;
  }; };
  auto mul = [&](const std::string& x, const std::string& y) {
    v1::MultiplyRequest req;
    req.set_a(x);
    req.set_b(y);
    return req;
  };
  auto galerkin = [&](const std::string& p, const std::string& x, int form) { return [&stub, p, x, form] {
    grpc::ClientContext ctx;
    v1::GalerkinRequest req;
    req.set_p(p);
    req.set_a(x);
    req.set_form(static_cast<v1::GalerkinForm>(form));
    auto reader = stub.Galerkin(&ctx, req);
    return read_result(*reader).status;
  }; };
  auto transpose = [&](const std::string& x) { return [&stub, x] {
    grpc::ClientContext ctx;
    v1::TransposeRequest req;
    req.set_a(x);
    auto reader = stub.Transpose(&ctx, req);
    return read_result(*reader).status;
  }; };
  auto down = [&](const std::string& h) { return [&stub, h] { return download(stub, h).status; }; };
  auto raw = [&](const std::string& method, std::vector<std::string> messages) {
    return [channel, method, messages] { return raw_call(channel, "/spgemm.v1.Spgemm/" + method, messages); };
  };
  auto one = [&](const google::protobuf::Message& m) { return std::vector<std::string>{bytes_of(m)}; };
  v1::DeleteRequest delete_unknown, delete_empty;
  delete_unknown.set_handle(unknown);
  v1::DescribeRequest describe_unknown, describe_empty;
  describe_unknown.set_handle(unknown);
  v1::ListRequest negative_page, bad_token;
  negative_page.set_page_size(-1);
  bad_token.set_page_token("not-a-token");
  v1::UploadPart empty_part;

  const std::vector<bad_request> catalogue = {
      // Upload: the header.
      {"negative rows", up(with_header([](auto& h) { h.set_rows(-5); })), code::INVALID_ARGUMENT, "negative"},
      {"negative cols", up(with_header([](auto& h) { h.set_cols(-1); })), code::INVALID_ARGUMENT, "negative"},
      {"negative nnz", up(with_header([](auto& h) { h.set_nnz(-1); })), code::INVALID_ARGUMENT, "negative"},
      {"no value type", up(with_header([](auto& h) { h.set_value_type(v1::VALUE_TYPE_UNSPECIFIED); })),
       code::INVALID_ARGUMENT, "value_type"},
      {"unknown value type", up(with_header([](auto& h) { h.set_value_type(static_cast<v1::ValueType>(9)); })),
       code::INVALID_ARGUMENT, "value_type"},
      {"64-bit indices", up(with_header([](auto& h) { h.set_index_type(v1::INT64); })), code::INVALID_ARGUMENT,
       "INT64"},
      {"unknown index type", up(with_header([](auto& h) { h.set_index_type(static_cast<v1::IndexType>(7)); })),
       code::INVALID_ARGUMENT, "index_type"},
      {"columns past 32-bit indices", up(with_header([](auto& h) { h.set_cols(int64_t{1} << 32); })),
       code::INVALID_ARGUMENT, "32-bit"},
      {"rows near 2^63", up(with_header([](auto& h) { h.set_rows(std::numeric_limits<int64_t>::max()); })),
       code::INVALID_ARGUMENT, "too large"},
      {"nnz past rows x cols", up(with_header([](auto& h) { h.set_nnz(100 * 100 + 1); })), code::INVALID_ARGUMENT,
       "exceeds rows x cols"},
      {"entries in an empty shape", up(with_header([](auto& h) { h.set_rows(0); h.set_nnz(3); })),
       code::INVALID_ARGUMENT, "exceeds rows x cols (0 x 100)"},
      {"negative ttl", up(with_header([](auto& h) { h.set_ttl_seconds(-1); })), code::INVALID_ARGUMENT,
       "ttl_seconds"},
      {"257-byte name", up(with_header([](auto& h) { h.set_name(std::string(257, 'n')); })),
       code::INVALID_ARGUMENT, "at most 256 bytes"},
      {"1 MB name", up(with_header([](auto& h) { h.set_name(std::string(1 << 20, 'n')); })),
       code::INVALID_ARGUMENT, "at most 256 bytes"},
      {"a name that is not UTF-8", raw("Upload", {"\x0a\x04\x32\x02\xc3\x28"}), code::INVALID_ARGUMENT,
       "does not parse"},
      {"10^12 nonzeros claimed",
       up(with_header([](auto& h) { h.set_rows(1000000); h.set_cols(1000000); h.set_nnz(1000000000000); })),
       code::RESOURCE_EXHAUSTED, "budget"},
      // Upload: the stream.
      {"no parts at all", up({}), code::INVALID_ARGUMENT, "ended before its MatrixHeader"},
      {"a chunk first", up({chunks[0]}), code::INVALID_ARGUMENT, "must be the MatrixHeader"},
      {"two headers", up({header, header}), code::INVALID_ARGUMENT, "second MatrixHeader"},
      {"an empty part", up({header, empty_part}), code::INVALID_ARGUMENT, "neither a header nor a chunk"},
      {"undecodable part", raw("Upload", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      {"chunks out of order", up({header, chunks[1]}), code::INVALID_ARGUMENT, "out of order"},
      {"a chunk sent twice", up({header, chunks[0], chunks[0]}), code::INVALID_ARGUMENT, "out of order"},
      {"the last chunks missing", up({header, chunks[0], chunks[1]}), code::INVALID_ARGUMENT, "missing"},
      {"no rows in a chunk", up(with_chunk([](auto& c) { c.set_row_count(0); })), code::INVALID_ARGUMENT,
       "row_count must be positive"},
      {"rows past the header's", up(with_chunk([](auto& c) { c.set_row_count(1000); })), code::INVALID_ARGUMENT,
       "runs past the header"},
      {"offsets of the wrong length", up(with_chunk([](auto& c) { c.mutable_row_offsets()->append(8, '\0'); })),
       code::INVALID_ARGUMENT, "row_offsets holds"},
      {"offsets not rebased", up(with_chunk([&](auto& c) {
         auto o = offsets(c);
         for (auto& v : o) v += 1;
         set_offsets(c, o);
       })), code::INVALID_ARGUMENT, "rebased"},
      {"offsets decreasing", up(with_chunk([&](auto& c) {
         auto o = offsets(c);
         std::swap(o[1], o[2]);
         set_offsets(c, o);
       })), code::INVALID_ARGUMENT, "decrease"},
      {"nonzeros past the header's", up(with_chunk([&](auto& c) {
         auto o = offsets(c);
         o.back() = 1 << 20;
         set_offsets(c, o);
       })), code::INVALID_ARGUMENT, "run past the header's nnz"},
      {"columns of the wrong length", up(with_chunk([](auto& c) { c.mutable_col_indices()->append(4, '\0'); })),
       code::INVALID_ARGUMENT, "col_indices holds"},
      {"values of the wrong length", up(with_chunk([](auto& c) { c.mutable_values()->resize(8); })),
       code::INVALID_ARGUMENT, "values holds"},
      {"a column out of range", up(with_chunk([&](auto& c) { set_column(c, 0, 100); })), code::INVALID_ARGUMENT,
       "is outside [0, 100)"},
      {"a negative column", up(with_chunk([&](auto& c) { set_column(c, 0, -7); })), code::INVALID_ARGUMENT,
       "is outside"},
      {"columns unsorted", up(with_chunk([&](auto& c) {
         const int32_t first = column(c, 0);
         set_column(c, 0, column(c, 1));
         set_column(c, 1, first);
       })), code::INVALID_ARGUMENT, "comes after"},
      {"a column twice", up(with_chunk([&](auto& c) { set_column(c, 1, column(c, 0)); })), code::INVALID_ARGUMENT,
       "duplicates"},
      {"fewer nonzeros than the header's",
       up([&] {
         auto parts = with_header([](auto& h) { h.set_nnz(h.nnz() + 1); });
         parts.insert(parts.end(), chunks.begin(), chunks.end());
         return parts;
       }()),
       code::INVALID_ARGUMENT, "the header announced"},
      // Multiply.
      {"multiply: no a", product(mul("", ha)), code::INVALID_ARGUMENT, "'a' is empty"},
      {"multiply: no b", product(mul(ha, "")), code::INVALID_ARGUMENT, "'b' is empty"},
      {"multiply: unknown a", product(mul(unknown, ha)), code::NOT_FOUND, "no matrix with handle " + unknown},
      {"multiply: unknown b", product(mul(ha, unknown)), code::NOT_FOUND, "no matrix with handle " + unknown},
      {"multiply: shapes that do not conform", product(mul(ha, hs)), code::INVALID_ARGUMENT, "25 x 25"},
      {"multiply: unknown algorithm", product([&] {
         auto r = mul(ha, ha);
         r.mutable_options()->set_algorithm("no-such-method");
         return r;
       }()), code::INVALID_ARGUMENT, "gustavson"},
      {"multiply: a GPU method on the CPU", product([&] {
         auto r = mul(ha, ha);
         r.mutable_options()->set_algorithm("hash");
         return r;
       }()), code::INVALID_ARGUMENT, "needs a GPU"},
      {"multiply: unknown output type", product([&] {
         auto r = mul(ha, ha);
         r.mutable_options()->set_output_type(static_cast<v1::ValueType>(5));
         return r;
       }()), code::INVALID_ARGUMENT, "output_type"},
      {"multiply: a kept result's 300-byte name", product([&] {
         auto r = mul(ha, ha);
         r.mutable_output()->set_keep(true);
         r.mutable_output()->set_name(std::string(300, 'k'));
         return r;
       }()), code::INVALID_ARGUMENT, "at most 256 bytes"},
      {"multiply: undecodable", raw("Multiply", {undecodable}), code::INVALID_ARGUMENT,
       "does not parse as spgemm.v1.MultiplyRequest"},
      // Galerkin and Transpose.
      {"galerkin: unknown form", galerkin(ha, ha, 5), code::INVALID_ARGUMENT, "form must be"},
      {"galerkin: no p", galerkin("", ha, 0), code::INVALID_ARGUMENT, "'p' is empty"},
      {"galerkin: P that does not fit A", galerkin(hs, ha, 0), code::INVALID_ARGUMENT, "x"},
      {"galerkin: undecodable", raw("Galerkin", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      {"transpose: unknown", transpose(unknown), code::NOT_FOUND, "no matrix with handle"},
      {"transpose: no a", transpose(""), code::INVALID_ARGUMENT, "'a' is empty"},
      // Download.
      {"download: unknown", down(unknown), code::NOT_FOUND, "no matrix with handle"},
      {"download: no handle", down(""), code::INVALID_ARGUMENT, "'handle' is empty"},
      {"download: undecodable", raw("Download", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      // The unary calls.
      {"delete: unknown", raw("Delete", one(delete_unknown)), code::NOT_FOUND, "no matrix with handle"},
      {"delete: no handle", raw("Delete", one(delete_empty)), code::INVALID_ARGUMENT, "'handle' is empty"},
      {"delete: undecodable", raw("Delete", {undecodable}), code::INVALID_ARGUMENT,
       "does not parse as spgemm.v1.DeleteRequest"},
      {"describe: unknown", raw("Describe", one(describe_unknown)), code::NOT_FOUND, "no matrix with handle"},
      {"describe: no handle", raw("Describe", one(describe_empty)), code::INVALID_ARGUMENT, "'handle' is empty"},
      {"describe: undecodable", raw("Describe", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      {"list: a negative page size", raw("List", one(negative_page)), code::INVALID_ARGUMENT, "page_size"},
      {"list: a page token it never gave", raw("List", one(bad_token)), code::INVALID_ARGUMENT, "page_token"},
      {"list: undecodable", raw("List", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      {"status: undecodable", raw("Status", {undecodable}), code::INVALID_ARGUMENT, "does not parse"},
      {"an unknown method", raw("NoSuchMethod", {""}), code::UNIMPLEMENTED, ""},
  };
  ASSERT_GE(catalogue.size(), 40u);
  for (const bad_request& r : catalogue) {
    const grpc::Status s = r.send();
    EXPECT_EQ(s.error_code(), r.expected) << r.name << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(r.says), std::string::npos) << r.name << ": " << s.error_message();
    EXPECT_LT(s.error_message().size(), 1000u) << r.name << ": a message is a sentence, not an echo";
  }

  // Nothing was lost or left: the same matrices, no reservation, no job; it serves.
  ASSERT_TRUE(settles(stub));
  const v1::ServerStatus after = server_status(stub);
  EXPECT_EQ(after.matrices(), before.matrices());
  EXPECT_EQ(after.devices(0).cached_bytes(), before.devices(0).cached_bytes());
  EXPECT_EQ(after.host_cached_bytes(), before.host_cached_bytes());
  const result squared = multiply(stub, ha, ha);
  ASSERT_TRUE(squared.status.ok()) << squared.status.error_message();
  EXPECT_EQ(squared.matrix.nnz(), spgemm::cpu_multiply(a, a).nnz());
  EXPECT_TRUE(download(stub, hs).status.ok());
}

}  // namespace
}  // namespace spgemm::attack
