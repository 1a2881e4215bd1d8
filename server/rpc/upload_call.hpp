// One Upload call's requests, apart from the network: each message received
// is decoded and checked (the header once, first; then chunks, assembled and
// checked as they come, proto/wire) and the matrix goes into the cache as it
// arrives (core/upload.hpp); the stream's end stores it. upload_reactor
// reads and answers; the fuzzer (tests/fuzz) drives this directly. Every
// failure, an allocation's too, is a status: the call then holds nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "core/upload.hpp"
#include "rpc/spare_arrays.hpp"
#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace spgemmd {

class upload_call {
 public:
  // An upload of `who`'s (past open_call).
  upload_call(core::matrix_cache& cache, core::scheduler& sched, spare_arrays& spares, core::caller who);
  upload_call(const upload_call&) = delete;  // the upload refers to the assembler's arrays
  upload_call& operator=(const upload_call&) = delete;

  // A received UploadPart (raw bytes). Not OK: the call ends with that
  // status (what it held is freed then).
  grpc::Status receive(const grpc::ByteBuffer& part);
  // The client's writes are done: the matrix, whole and valid, into the
  // cache; its entry in `stored`.
  grpc::Status complete(core::entry_info* stored);
  // Frees what the call holds (its room, its arrays); a later call of
  // receive or complete fails.
  void abandon();

  // How long its store into the cache took (ms), once complete.
  double store_ms() const { return store_ms_; }

 private:
  grpc::Status on_part(const grpc::ByteBuffer& part);
  grpc::Status on_header(const spgemm::v1::MatrixHeader& h);

  core::matrix_cache& cache_;
  core::scheduler& sched_;
  spare_arrays& spares_;
  const core::caller caller_;
  std::vector<grpc::Slice> slices_;  // of the part being added
  spgemm::wire::chunk_pieces pieces_;
  std::optional<spgemm::wire::chunk_assembler> assembler_;
  std::optional<core::upload> upload_;  // copies from the assembler's arrays: goes before them
  bool over_ = false;
  double store_ms_ = 0;
};

}  // namespace spgemmd
