#include "rpc/upload_call.hpp"

#include <chrono>
#include <utility>

#include "core/matrices.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"
#include "rpc/upload_store.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

upload_call::upload_call(core::matrix_cache& cache, core::scheduler& sched, spare_arrays& spares, core::caller who)
    : cache_(cache), sched_(sched), spares_(spares), caller_(std::move(who)) {}

void upload_call::abandon() {
  over_ = true;
  upload_.reset();  // a failed upload's room is free again (the cache tells the scheduler)
  assembler_.reset();
  slices_.clear();
}

grpc::Status upload_call::receive(const grpc::ByteBuffer& part) {
  if (over_) return {grpc::StatusCode::FAILED_PRECONDITION, "the upload has ended"};
  grpc::Status status;
  try {
    status = on_part(part);
    if (status.ok() && upload_) upload_->arrived(assembler_->rows_received(), assembler_->nnz_received());
  } catch (...) {
    status = to_grpc_status(std::current_exception());
  }
  slices_.clear();
  if (!status.ok()) abandon();
  return status;
}

grpc::Status upload_call::on_part(const grpc::ByteBuffer& part) {
  const grpc::Status chunk_first = {grpc::StatusCode::INVALID_ARGUMENT,
                                    "the first UploadPart must be the MatrixHeader; a chunk came before it"};
  if (wire::decode_chunk(part, &slices_, &pieces_)) return assembler_ ? assembler_->add(pieces_) : chunk_first;
  v1::UploadPart p;
  if (grpc::Status st = parse(part, &p); !st.ok()) return st;
  if (p.has_header()) return on_header(p.header());
  if (p.has_chunk()) return assembler_ ? assembler_->add(p.chunk()) : chunk_first;
  return {grpc::StatusCode::INVALID_ARGUMENT, "an UploadPart holds neither a header nor a chunk"};
}

grpc::Status upload_call::on_header(const v1::MatrixHeader& h) {
  if (assembler_) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "a second MatrixHeader arrived; send the header exactly once, first"};
  }
  if (grpc::Status st = wire::chunk_assembler::check_header(h); !st.ok()) return st;
  if (const core::outcome named = core::check_name("header.name", h.name()); !named.ok()) {
    return to_grpc_status(named);
  }
  const spgemm::matrix_info info{h.rows(), h.cols(), h.nnz(),
                                 h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64};
  if (const core::outcome fits = core::upload::check(cache_, caller_, info); !fits.ok()) return to_grpc_status(fits);
  // Room in a budget first; then the arrays (address space: memory is committed as chunks arrive).
  assembler_.emplace(h, /*check_columns=*/true, spares_.take(h.rows(), h.nnz(), h.value_type()));
  upload_.emplace(cache_, sched_, caller_, info, h.name(), host_arrays(*assembler_));
  return grpc::Status::OK;
}

grpc::Status upload_call::complete(core::entry_info* stored) {
  if (over_) return {grpc::StatusCode::FAILED_PRECONDITION, "the upload has ended"};
  over_ = true;
  if (!assembler_) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "the upload ended before its MatrixHeader: send the header first"};
  }
  grpc::Status status = assembler_->finish();
  if (status.ok()) {
    try {
      // The assembler checked every chunk's columns as it came: the matrix is valid CSR.
      const core::steady::time_point received = core::steady::now();
      *stored = store_upload(spares_, *assembler_, *upload_);
      upload_.reset();
      assembler_.reset();
      store_ms_ = std::chrono::duration<double, std::milli>(core::steady::now() - received).count();
    } catch (...) {
      status = to_grpc_status(std::current_exception());
    }
  }
  abandon();
  return status;
}

}  // namespace spgemmd
