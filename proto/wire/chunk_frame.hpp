// Chunk messages as raw gRPC byte buffers, with protobuf's encoding written
// and read by hand: the array bytes go from the sender's memory to the socket
// and from the received slices into the assembled arrays without a protobuf
// string and a serialization buffer in between. The bytes on the wire are
// those protobuf writes for the same UploadPart / ResultPart (`chunk` is field
// 2 of both), so either end may use the generated classes instead.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "wire/chunk_codec.hpp"

namespace spgemm::wire {

// The UploadPart / ResultPart holding the chunk of rows [row_begin, row_end)
// of `m` (offsets rebased to 0), labelled row `first_row` on the wire (a
// block's rows are numbered within the whole matrix). With an `owner`, the
// column indices and values are referenced, not copied: gRPC keeps a
// reference to `owner` until it has sent them. Without, everything is copied
// into one buffer.
grpc::ByteBuffer encode_chunk(const csr_view& m, int64_t row_begin, int64_t row_end, int64_t first_row,
                              const std::shared_ptr<const void>& owner = nullptr);

// Where `message` (an UploadPart or a ResultPart) is a chunk in the usual
// encoding, fills `out` with views into `slices` (which hold the message's
// bytes and must outlive `out`) and returns true. Anything else (a header,
// stats, a kept handle, or an unusual encoding) returns false: parse it with
// the generated class.
bool decode_chunk(const grpc::ByteBuffer& message, std::vector<grpc::Slice>* slices, chunk_pieces* out);

}  // namespace spgemm::wire
