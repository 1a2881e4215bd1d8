#include "rpc/upload_reactor.hpp"

#include <chrono>
#include <type_traits>
#include <variant>

#include "ops/log.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

double seconds_since(core::steady::time_point t) {
  return std::chrono::duration<double>(core::steady::now() - t).count();
}

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

upload_reactor::upload_reactor(service_state& s, grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response)
    : s_(s), ctx_(ctx), response_(response) {
  if (grpc::Status st = open_call(s_, *ctx_, grpc::Status::OK, &caller_); !st.ok()) {
    finish(std::move(st));
    return;
  }
  StartRead(&in_);
}

void upload_reactor::OnReadDone(bool ok) {
  if (!ok) {
    complete();
    return;
  }
  bytes_in_ += static_cast<int64_t>(in_.Length());
  grpc::Status status = on_part();
  slices_.clear();
  if (status.ok() && upload_) {
    try {
      upload_->arrived(assembler_->rows_received(), assembler_->nnz_received());
    } catch (...) {
      status = to_grpc_status(std::current_exception());
    }
  }
  if (!status.ok()) {
    finish(std::move(status));
    return;
  }
  StartRead(&in_);
}

void upload_reactor::OnDone() {
  const std::string outcome = code_name(code_);
  s_.metrics.bytes_in(bytes_in_);
  s_.metrics.call_ended("upload", outcome);
  s_.metrics.phase("upload", "stream", seconds_since(created_));
  log_event(code_ == grpc::StatusCode::OK ? "info" : "warn", "upload",
            {{"code", outcome}, {"handle", handle_}, {"bytes_in", bytes_in_},
             {"total_ms", seconds_since(created_) * 1e3}, {"receive_ms", receive_ms_}, {"store_ms", store_ms_},
             {"message", message_}});
  delete this;
}

grpc::Status upload_reactor::on_part() {
  const grpc::Status chunk_first = {grpc::StatusCode::INVALID_ARGUMENT,
                                    "the first UploadPart must be the MatrixHeader; a chunk came before it"};
  if (wire::decode_chunk(in_, &slices_, &pieces_)) return assembler_ ? assembler_->add(pieces_) : chunk_first;
  v1::UploadPart part;
  if (grpc::Status st = parse(in_, &part); !st.ok()) return st;
  if (part.has_header()) return on_header(part.header());
  if (part.has_chunk()) return assembler_ ? assembler_->add(part.chunk()) : chunk_first;
  return {grpc::StatusCode::INVALID_ARGUMENT, "an UploadPart holds neither a header nor a chunk"};
}

grpc::Status upload_reactor::on_header(const v1::MatrixHeader& h) {
  if (assembler_) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "a second MatrixHeader arrived; send the header exactly once, first"};
  }
  if (grpc::Status st = wire::chunk_assembler::check_header(h); !st.ok()) return st;
  const spgemm::matrix_info info{h.rows(), h.cols(), h.nnz(),
                                 h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64};
  if (const core::outcome fits = core::upload::check(s_.cache, caller_, info); !fits.ok()) {
    return to_grpc_status(fits);
  }
  assembler_.emplace(h, /*check_columns=*/true, s_.upload_arrays.take(h.rows(), h.nnz(), h.value_type()));
  try {
    upload_.emplace(s_.cache, s_.sched, caller_, info, host_arrays(*assembler_));
  } catch (...) {
    return to_grpc_status(std::current_exception());
  }
  return grpc::Status::OK;
}

void upload_reactor::complete() {
  if (ctx_->IsCancelled()) {
    finish({grpc::StatusCode::CANCELLED, "the upload was cancelled"});
    return;
  }
  if (!assembler_) {
    finish({grpc::StatusCode::INVALID_ARGUMENT, "the upload ended before its MatrixHeader: send the header first"});
    return;
  }
  if (grpc::Status st = assembler_->finish(); !st.ok()) {
    finish(st);
    return;
  }
  try {
    // The assembler checked every chunk's columns as it came: the matrix is valid CSR.
    const core::steady::time_point received = core::steady::now();
    receive_ms_ = seconds_since(created_) * 1e3;
    const v1::MatrixHeader h = assembler_->header();
    spgemm::any_csr m;
    if (h.value_type() == v1::FLOAT32) {
      m = assemble<float>(*assembler_);
    } else {
      m = assemble<double>(*assembler_);
    }
    const core::entry_info e = upload_->store(m, h.name(), h.ttl_seconds());
    upload_.reset();
    assembler_.reset();
    store_ms_ = seconds_since(received) * 1e3;
    s_.upload_arrays.give(arrays_of(std::move(m)));  // empty where the host copy took them
    v1::MatrixInfo info;
    to_proto(e, &info);
    handle_ = info.handle();
    bool own = false;
    response_->Clear();
    grpc::SerializationTraits<v1::MatrixInfo>::Serialize(info, response_, &own);
    finish(grpc::Status::OK);
  } catch (...) {
    finish(to_grpc_status(std::current_exception()));
  }
}

void upload_reactor::finish(grpc::Status status) {
  code_ = status.error_code();
  message_ = status.error_message();
  upload_.reset();  // a failed upload's room is free again (the cache tells the scheduler)
  assembler_.reset();
  Finish(std::move(status));
}

}  // namespace spgemmd
