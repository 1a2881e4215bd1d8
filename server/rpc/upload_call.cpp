#include "rpc/upload_call.hpp"

#include <chrono>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/matrices.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

// The arrays of `m`, for the next upload to be assembled into.
wire::csr_arrays arrays_of(spgemm::any_csr&& m) {
  wire::csr_arrays a;
  std::visit(
      [&](auto& c) {
        a.row_offsets = std::move(c.row_offsets);
        a.col_indices = std::move(c.col_indices);
        if constexpr (std::is_same_v<typename std::decay_t<decltype(c)>::value, float>) {
          a.values_f32 = std::move(c.values);
        } else {
          a.values_f64 = std::move(c.values);
        }
      },
      m);
  return a;
}

template <typename T>
spgemm::csr_matrix<T> assemble(wire::chunk_assembler& a) {
  spgemm::csr_matrix<T> m;
  m.rows = a.header().rows();
  m.cols = a.header().cols();
  m.row_offsets = std::move(a.row_offsets());
  m.col_indices = std::move(a.col_indices());
  if constexpr (std::is_same_v<T, float>) {
    m.values = std::move(a.values_f32());
  } else {
    m.values = std::move(a.values_f64());
  }
  return m;
}

// The arrays an upload arrives into: reserved for the whole matrix by the
// assembler, so they stay where they are while it fills them.
spgemm::host_csr_arrays host_arrays(wire::chunk_assembler& a) {
  spgemm::host_csr_arrays h;
  h.row_offsets = a.row_offsets().data();
  h.col_indices = a.col_indices().data();
  if (a.header().value_type() == v1::FLOAT32) {
    h.values = a.values_f32().data();
  } else {
    h.values = a.values_f64().data();
  }
  return h;
}

}  // namespace

upload_call::upload_call(core::matrix_cache& cache, core::scheduler& sched, spare_arrays& spares, std::string tenant)
    : cache_(cache), sched_(sched), spares_(spares), tenant_(std::move(tenant)) {}

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
  if (const core::outcome fits = core::upload::check(cache_, info); !fits.ok()) return to_grpc_status(fits);
  // Room in a budget first; then the arrays (address space: memory is committed as chunks arrive).
  assembler_.emplace(h, /*check_columns=*/true, spares_.take(h.rows(), h.nnz(), h.value_type()));
  upload_.emplace(cache_, sched_, info, h.name(), host_arrays(*assembler_));
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
      spgemm::any_csr m;
      if (assembler_->header().value_type() == v1::FLOAT32) {
        m = assemble<float>(*assembler_);
      } else {
        m = assemble<double>(*assembler_);
      }
      *stored = upload_->store(tenant_, m, assembler_->header().ttl_seconds());
      upload_.reset();
      assembler_.reset();
      store_ms_ = std::chrono::duration<double, std::milli>(core::steady::now() - received).count();
      spares_.give(arrays_of(std::move(m)));  // empty where the host copy took them
    } catch (...) {
      status = to_grpc_status(std::current_exception());
    }
  }
  abandon();
  return status;
}

}  // namespace spgemmd
