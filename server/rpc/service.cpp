#include "rpc/service.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>

#include "ops/log.hpp"
#include "rpc/row_blocks.hpp"
#include "rpc/status_map.hpp"
#include "rpc/upload_pipeline.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/multiply.hpp"
#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

// Largest chunk a client accepts by default (4 MiB), less room for framing.
constexpr int64_t max_chunk_bytes = (4 << 20) - (64 << 10);
constexpr int64_t min_chunk_bytes = 4096;
// Rows fetched from a backend at a time, for streaming.
constexpr int64_t fetch_block_bytes = 32 << 20;

// The caller's tenant. Empty until authentication arrives; it will read the
// call's auth metadata.
std::string tenant_of(const grpc::CallbackServerContext* /*ctx*/) { return ""; }

double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

grpc::Status unavailable() { return {grpc::StatusCode::UNAVAILABLE, "the server is shutting down; retry elsewhere"}; }

v1::ValueType to_proto(spgemm::value_type t) { return t == spgemm::value_type::f32 ? v1::FLOAT32 : v1::FLOAT64; }

std::string shape(const spgemm::matrix_info& m) { return std::to_string(m.rows) + " x " + std::to_string(m.cols); }

void set_time(google::protobuf::Timestamp* ts, wall::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  ts->set_seconds(ns / 1000000000);
  ts->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

void to_proto(const entry_info& e, v1::MatrixInfo* out) {
  out->set_handle(e.handle);
  out->set_name(e.name);
  out->set_rows(e.info.rows);
  out->set_cols(e.info.cols);
  out->set_nnz(e.info.nnz);
  out->set_value_type(to_proto(e.info.type));
  out->set_index_type(v1::INT32);
  out->set_bytes(static_cast<int64_t>(e.bytes));
  out->set_residency(e.on_device ? v1::DEVICE : v1::HOST);
  out->set_device(e.device);
  set_time(out->mutable_created(), e.created);
  set_time(out->mutable_last_used(), e.last_used);
  out->set_ttl_seconds(e.ttl_seconds);
}

// Parses a message received as raw bytes.
template <typename M>
grpc::Status parse(const grpc::ByteBuffer& raw, M* out) {
  grpc::ByteBuffer copy(raw);  // shares the slices; Deserialize consumes its buffer
  if (grpc::SerializationTraits<M>::Deserialize(&copy, out).ok()) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT, "the message does not parse as " + out->GetTypeName()};
}

grpc::Status not_found(const std::string& handle) {
  return {grpc::StatusCode::NOT_FOUND, "no matrix with handle " + handle + "; it may have expired or been deleted"};
}

// Pins the matrix named by request field `field`.
grpc::Status lookup(service_state& s, const std::string& tenant, const char* field, const std::string& handle,
                    pin* out) {
  if (handle.empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            std::string("request field '") + field + "' is empty: give the handle of a stored matrix (from Upload or a kept result)"};
  }
  *out = s.cache.acquire(tenant, handle);
  if (!*out) return not_found(handle);
  return grpc::Status::OK;
}

grpc::Status parse_options(const v1::MultiplyOptions& o, spgemm::multiply_options* out) {
  try {
    out->algo = spgemm::parse_algorithm(o.algorithm().empty() ? "auto" : o.algorithm());
  } catch (const spgemm::error& e) {
    return to_grpc_status(e);
  }
  switch (o.output_type()) {
    case v1::VALUE_TYPE_UNSPECIFIED: break;
    case v1::FLOAT32: out->output_type = spgemm::value_type::f32; break;
    case v1::FLOAT64: out->output_type = spgemm::value_type::f64; break;
    default:
      return {grpc::StatusCode::INVALID_ARGUMENT, "options.output_type must be FLOAT32, FLOAT64 or unspecified"};
  }
  return grpc::Status::OK;
}

wire::csr_view view_of(const spgemm::any_csr& m) {
  return std::visit(
      [](const auto& c) {
        using T = typename std::decay_t<decltype(c)>::value;
        wire::csr_view v;
        v.rows = c.rows;
        v.cols = c.cols;
        v.nnz = c.nnz();
        v.row_offsets = c.row_offsets.data();
        v.col_indices = c.col_indices.data();
        v.values = c.values.data();
        v.value_type = std::is_same_v<T, float> ? v1::FLOAT32 : v1::FLOAT64;
        return v;
      },
      m);
}

bool same_size(const spgemm::matrix_info& a, const spgemm::matrix_info& b) {
  return a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz && a.type == b.type;
}

int64_t clamp_chunk(int64_t requested, int64_t fallback) {
  const int64_t c = requested > 0 ? requested : fallback;
  return std::clamp(c, min_chunk_bytes, max_chunk_bytes);
}

// Streams a result (header, chunks, stats) or a kept handle (kept, stats),
// or a stored matrix (header, chunks) for Download. The last message goes
// with the status (StartWriteAndFinish): one completion less per call.
class result_writer final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  result_writer(service_state& s, grpc::CallbackServerContext* ctx, std::string kind, int64_t chunk_bytes)
      : s_(s), ctx_(ctx), kind_(std::move(kind)),
        chunk_bytes_(clamp_chunk(chunk_bytes, s.cfg.chunk_bytes)), tenant_(tenant_of(ctx)) {}

  void fail(grpc::Status status) { finish(std::move(status)); }

  // Runs `j`; streams or keeps its result.
  void start_job(std::shared_ptr<job> j, bool keep, std::string keep_name, std::string algorithm) {
    keep_ = keep;
    keep_name_ = std::move(keep_name);
    stats_.set_algorithm(algorithm);
    job_ = j;
    j->done = [this](job& done, grpc::Status status) { on_job_done(done, std::move(status)); };
    // The headers go now, from gRPC's thread while the job runs: the result's
    // first message, often written from a worker, then carries less.
    StartSendInitialMetadata();
    const std::optional<spgemm::matrix_info> expected = expected_result(*j);  // while the job is this thread's
    submitted_ = steady::now();
    grpc::Status submitted = s_.sched.submit(j);
    if (!submitted.ok()) {
      job_.reset();
      finish(std::move(submitted));
      return;
    }
    if (expected) announce(*expected, j->device);
  }

  // Streams the matrix `held` (stored on `backend`, or the host copy `host`).
  void start_download(pin held, std::shared_ptr<spgemm::backend> backend, std::shared_ptr<spgemm::stored_matrix> stored,
                      std::shared_ptr<const spgemm::any_csr> host) {
    held_ = std::move(held);
    try {
      if (stored) {
        rows_.emplace(std::move(backend), std::move(stored), block_bytes());
      } else {
        rows_.emplace(std::move(host));
      }
    } catch (...) {
      finish(to_grpc_status(std::current_exception()));
      return;
    }
    send_stats_ = false;
    state_ = state::header;
    write_next();
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> job_end;  // what the job's end left for this call to go on with
    bool job_runs_on = false;
    {
      std::lock_guard<std::mutex> lock(reply_mu_);
      if (announce_ == announcement::in_flight) {
        announce_ = announcement::sent;
        job_end = std::move(after_announcement_);
        job_runs_on = !job_end;
      }
    }
    if (job_runs_on) {
      // The announcement went out; the job's end writes next. A client gone stops it.
      if (!ok) cancel_job();
      return;
    }
    if (!ok) {
      finish({grpc::StatusCode::CANCELLED, "the client went away while the result streamed"});
    } else if (job_end) {
      go_on(*job_end);
    } else {
      write_next();
    }
  }

  void OnCancel() override { cancel_job(); }

  void OnDone() override {
    const char* outcome = code_name(final_code_);
    const char* level = final_code_ == grpc::StatusCode::OK ? "info" : "warn";
    const double total_ms = seconds_since(created_) * 1e3;
    s_.metrics.add("spgemmd_jobs_total", labels({{"kind", kind_}, {"outcome", outcome}}));
    if (streamed_) observe_phase("stream", seconds_since(stream_started_));
    s_.metrics.add("spgemmd_bytes_out_total", "", static_cast<double>(bytes_out_));
    if (stats_.flops() > 0) {
      s_.metrics.add("spgemmd_flops_total", labels({{"kind", kind_}, {"device", stats_.device()}}), stats_.flops());
    }
    if (job_over_) {
      const call_phases p = phases();
      observe_phases(p);
      log_event(level, kind_,
                {{"code", outcome}, {"total_ms", total_ms}, {"bytes_out", bytes_out_}, {"kept", keep_}, {"nnz", stats_.nnz()},
                 {"device", stats_.device()}, {"request_ms", p.request * 1e3}, {"queue_ms", times_.queue * 1e3},
                 {"admit_ms", times_.admit * 1e3}, {"estimate_ms", times_.estimate * 1e3},
                 {"handoff_ms", times_.handoff * 1e3}, {"compute_ms", times_.compute * 1e3},
                 {"engine_ms", times_.engine * 1e3}, {"release_ms", p.release * 1e3}, {"keep_ms", p.keep * 1e3},
                 {"reply_ms", p.reply * 1e3}, {"message", final_message_}});
    } else {
      log_event(level, kind_,
                {{"code", outcome}, {"total_ms", total_ms}, {"bytes_out", bytes_out_}, {"device", stats_.device()},
                 {"message", final_message_}});
    }
    delete this;
  }

 private:
  enum class state { idle, kept, header, chunks, stats };

  // Rows fetched from a backend at a time: few device-to-host copies and
  // syncs, at least two chunks.
  std::size_t block_bytes() const {
    return static_cast<std::size_t>(std::max<int64_t>(fetch_block_bytes, 2 * chunk_bytes_));
  }

  // The call's timeline beside the job's own phases (seconds): the request
  // until its job was submitted; after the job's last step, releasing its
  // inputs; a kept result's cache insert; and its reply until the last
  // message went to gRPC.
  struct call_phases {
    double request = 0, release = 0, keep = 0, reply = 0;
  };

  call_phases phases() const {
    auto between = [](steady::time_point from, steady::time_point to) {
      return std::max(0.0, std::chrono::duration<double>(to - from).count());
    };
    call_phases p;
    p.request = between(created_, submitted_);
    p.release = std::max(0.0, between(submitted_, job_ended_at_) - times_.queue - times_.handoff - times_.compute);
    if (keep_ && replying_at_ > job_ended_at_) {
      p.keep = between(job_ended_at_, replying_at_);
      p.reply = between(replying_at_, last_write_at_);
    }
    return p;
  }

  void observe_phase(const char* phase, double seconds) {
    s_.metrics.observe("spgemmd_phase_seconds", labels({{"kind", kind_}, {"phase", phase}}), seconds);
  }

  void observe_phases(const call_phases& p) {
    for (const auto& [phase, seconds] :
         {std::pair{"request", p.request}, {"queue", times_.queue}, {"admit", times_.admit},
          {"estimate", times_.estimate}, {"handoff", times_.handoff}, {"compute", times_.compute},
          {"engine", times_.engine}, {"release", p.release}}) {
      observe_phase(phase, seconds);
    }
    if (p.reply > 0) {
      observe_phase("keep", p.keep);
      observe_phase("reply", p.reply);
    }
  }

  // The size of the job's result where it is known before it runs: a kept
  // result of one step that ran before (the memo). Places the job.
  std::optional<spgemm::matrix_info> expected_result(job& j) {
    if (!keep_ || j.steps.size() != 1 || !j.steps[0].gave_before) return std::nullopt;
    s_.sched.place(j);
    return j.steps[0].gave_before(j);
  }

  // Sends the kept message while the job still runs (from gRPC's thread,
  // which answers its completion at once): at the job's end only the stats
  // are left to write, not two messages one after the other.
  void announce(const spgemm::matrix_info& info, int device) {
    if (job_over()) return;  // it ended already: the usual reply
    const entry_info promised = s_.cache.promise_stored(info, device, keep_name_, 0);
    {
      std::lock_guard<std::mutex> lock(reply_mu_);
      if (job_over_) return;  // it ended meanwhile
      kept_ = promised;
      announce_ = announcement::in_flight;
      state_ = state::kept;
    }
    write_next();
  }

  bool job_over() {
    std::lock_guard<std::mutex> lock(reply_mu_);
    return job_over_;
  }

  void on_job_done(job& j, grpc::Status status) {
    bool announced = false;
    {
      std::lock_guard<std::mutex> lock(reply_mu_);
      job_over_ = true;
      announced = announce_ != announcement::none;
    }
    job_ended_at_ = steady::now();
    times_ = j.times;
    stats_.set_queue_ms(j.times.queue * 1e3);
    stats_.set_compute_ms(j.times.compute * 1e3);
    stats_.set_estimate_bytes(static_cast<int64_t>(j.max_estimate));
    stats_.set_flops(2.0 * static_cast<double>(j.products));
    if (!j.methods.empty()) stats_.set_algorithm(j.methods);
    if (j.device >= 0) stats_.set_device(s_.cache.backends()[j.device]->name());
    if (status.ok()) status = take_result(j, announced);
    {
      std::lock_guard<std::mutex> lock(reply_mu_);
      if (announce_ == announcement::in_flight) {  // its OnWriteDone goes on
        after_announcement_ = std::move(status);
        return;
      }
    }
    go_on(status);
  }

  // Keeps the job's result (under the announced handle, where one went out)
  // or makes ready to stream it.
  grpc::Status take_result(job& j, bool announced) {
    try {
      const spgemm::matrix_info info = j.result->info();
      stats_.set_nnz(info.nnz);
      if (!keep_) {
        rows_.emplace(s_.cache.backends()[j.device], std::move(j.result), block_bytes());
        result_res_ = std::move(j.res);
        state_ = state::header;
        return grpc::Status::OK;
      }
      // A call gone (cancelled, past its deadline) would leave the result
      // cached until its TTL, its handle known to no one.
      if (j.cancel.cancelled()) return {grpc::StatusCode::CANCELLED, "the call was cancelled; its result is not kept"};
      if (announced && !same_size(info, kept_.info)) {
        return {grpc::StatusCode::INTERNAL, "the product has nnz " + std::to_string(info.nnz) +
                                                ", not the " + std::to_string(kept_.info.nnz) +
                                                " it had before and its handle announced; retry"};
      }
      if (announced) {
        s_.cache.insert_stored(tenant_, j.res, std::move(j.result), keep_name_, 0, &kept_);
      } else {
        kept_ = s_.cache.insert_stored(tenant_, j.res, std::move(j.result), keep_name_, 0);
        state_ = state::kept;
      }
      j.res.release();
      replying_at_ = steady::now();
      return grpc::Status::OK;
    } catch (...) {
      return to_grpc_status(std::current_exception());
    }
  }

  // After the job: its result's messages, or its error.
  void go_on(const grpc::Status& status) {
    if (status.ok()) {
      write_next();
    } else {
      finish(status);
    }
  }

  void cancel_job() {
    std::shared_ptr<job> j = std::atomic_load(&job_);
    if (j) j->cancel.cancel();
    s_.sched.poke();
  }

  // Whether a chunk is still to be sent.
  bool chunks_left() const { return plan_index_ < plan_.size() || (rows_ && rows_->more()); }

  // Sends out_; the status goes with it when nothing follows.
  void send(bool last) {
    bytes_out_ += static_cast<int64_t>(out_.Length());
    if (last) {
      finish(grpc::Status::OK, /*with_last_message=*/true);
    } else {
      StartWrite(&out_);
    }
  }

  void send(const v1::ResultPart& part, bool last) {
    bool own = false;
    out_.Clear();  // the serializer wants an empty buffer
    grpc::SerializationTraits<v1::ResultPart>::Serialize(part, &out_, &own);
    send(last);
  }

  void write_next() {
    try {
      v1::ResultPart part;
      switch (state_) {
        case state::kept:
          to_proto(kept_, part.mutable_kept());
          state_ = state::stats;
          send(part, false);
          return;
        case state::header: {
          streamed_ = true;
          stream_started_ = steady::now();
          const spgemm::matrix_info& info = rows_->info();
          v1::MatrixHeader* h = part.mutable_header();
          h->set_rows(info.rows);
          h->set_cols(info.cols);
          h->set_nnz(info.nnz);
          h->set_value_type(to_proto(info.type));
          h->set_index_type(v1::INT32);
          h->set_name(keep_name_);
          state_ = state::chunks;
          send(part, !chunks_left() && !send_stats_);
          return;
        }
        case state::chunks:
          if (plan_index_ == plan_.size()) {
            if (!rows_->more()) {
              // Every row sent: free the result now (the last block goes once
              // gRPC has sent it), then the stats.
              rows_.reset();
              result_res_.release();
              held_.reset();
              state_ = state::stats;
              write_next();
              return;
            }
            row_blocks::block b = rows_->next();
            block_ = std::move(b.rows);
            block_view_ = view_of(*block_);
            block_first_row_ = b.first_row;
            plan_ = wire::plan_row_blocks(block_view_, static_cast<std::size_t>(chunk_bytes_));
            plan_index_ = 0;
          }
          {
            const auto [b, e] = plan_[plan_index_++];
            // The arrays are referenced, not copied: gRPC holds the block until they are sent.
            out_ = wire::encode_chunk(block_view_, b, e, block_first_row_ + b, block_);
            send(!chunks_left() && !send_stats_);
          }
          return;
        case state::stats:
          stats_.set_total_ms(seconds_since(created_) * 1e3);
          stats_.set_bytes_out(keep_ ? 0 : bytes_out_);
          if (stats_.compute_ms() > 0 && stats_.flops() > 0) {
            stats_.set_gflops(stats_.flops() / (stats_.compute_ms() * 1e6));
          }
          *part.mutable_stats() = stats_;
          send(part, true);
          return;
        case state::idle:
          return;
      }
    } catch (...) {
      finish(to_grpc_status(std::current_exception()));
    }
  }

  // Ends the call with `status`; out_ goes with it where `with_last_message`.
  void finish(grpc::Status status, bool with_last_message = false) {
    final_code_ = status.error_code();
    final_message_ = status.error_message();
    last_write_at_ = steady::now();
    state_ = state::idle;
    block_.reset();
    rows_.reset();
    result_res_.release();
    held_.reset();
    std::atomic_store(&job_, std::shared_ptr<job>());
    if (with_last_message) {
      StartWriteAndFinish(&out_, grpc::WriteOptions(), std::move(status));
    } else {
      Finish(std::move(status));
    }
  }

  service_state& s_;
  grpc::CallbackServerContext* ctx_;
  std::string kind_;
  int64_t chunk_bytes_;
  std::string tenant_;
  steady::time_point created_ = steady::now();
  steady::time_point submitted_, job_ended_at_, replying_at_, last_write_at_;  // the timeline (phases())
  steady::time_point stream_started_;
  std::shared_ptr<job> job_;
  bool keep_ = false;
  std::string keep_name_;
  bool send_stats_ = true;
  job_times times_;
  // A kept message announced while the job runs (announce): in flight, then
  // sent. The job's end waits for it: what it leaves goes on from
  // OnWriteDone. Guarded by reply_mu_, with job_over_ (the job ended:
  // nothing more is announced).
  enum class announcement { none, in_flight, sent };
  std::mutex reply_mu_;
  announcement announce_ = announcement::none;
  bool job_over_ = false;
  std::optional<grpc::Status> after_announcement_;
  bool streamed_ = false;
  state state_ = state::idle;
  entry_info kept_;
  std::optional<row_blocks> rows_;
  reservation result_res_;
  pin held_;
  std::shared_ptr<const spgemm::any_csr> block_;  // the rows being sent
  wire::csr_view block_view_;
  int64_t block_first_row_ = 0;
  std::vector<std::pair<int64_t, int64_t>> plan_;
  std::size_t plan_index_ = 0;
  int64_t bytes_out_ = 0;
  v1::JobStats stats_;
  grpc::ByteBuffer out_;  // the message being written
  grpc::StatusCode final_code_ = grpc::StatusCode::OK;
  std::string final_message_;
};

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

// Reads an upload: chunks are decoded from the received bytes straight into
// the assembler (chunk_frame.hpp); the header, or a chunk in an unusual
// encoding, through the generated class.
class upload_reactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  upload_reactor(service_state& s, grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response)
      : s_(s), ctx_(ctx), response_(response) {
    if (s_.shutting_down) {
      finish(unavailable());
      return;
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      complete();
      return;
    }
    bytes_in_ += static_cast<int64_t>(in_.Length());
    grpc::Status status = on_part();
    slices_.clear();
    if (status.ok() && pipeline_) {
      try {
        pipeline_->arrived(assembler_->rows_received(), assembler_->nnz_received());
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

  void OnDone() override {
    s_.metrics.add("spgemmd_bytes_in_total", "", static_cast<double>(bytes_in_));
    s_.metrics.add("spgemmd_jobs_total", labels({{"kind", "upload"}, {"outcome", code_name(code_)}}));
    s_.metrics.observe("spgemmd_phase_seconds", labels({{"kind", "upload"}, {"phase", "stream"}}),
                       seconds_since(created_));
    log_event(code_ == grpc::StatusCode::OK ? "info" : "warn", "upload",
              {{"code", code_name(code_)}, {"handle", handle_}, {"bytes_in", bytes_in_},
               {"total_ms", seconds_since(created_) * 1e3}, {"receive_ms", receive_ms_}, {"store_ms", store_ms_},
               {"message", message_}});
    delete this;
  }

 private:
  grpc::Status on_part() {
    const grpc::Status chunk_first = {grpc::StatusCode::INVALID_ARGUMENT,
                                      "the first UploadPart must be the MatrixHeader; a chunk came before it"};
    if (wire::decode_chunk(in_, &slices_, &pieces_)) return assembler_ ? assembler_->add(pieces_) : chunk_first;
    v1::UploadPart part;
    if (grpc::Status st = parse(in_, &part); !st.ok()) return st;
    if (part.has_header()) return on_header(part.header());
    if (part.has_chunk()) return assembler_ ? assembler_->add(part.chunk()) : chunk_first;
    return {grpc::StatusCode::INVALID_ARGUMENT, "an UploadPart holds neither a header nor a chunk"};
  }

  grpc::Status on_header(const v1::MatrixHeader& h) {
    if (assembler_) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "a second MatrixHeader arrived; send the header exactly once, first"};
    }
    if (grpc::Status st = wire::chunk_assembler::check_header(h); !st.ok()) return st;
    spgemm::matrix_info info{h.rows(), h.cols(), h.nnz(),
                             h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64};
    const std::size_t budget = s_.cache.largest_budget();
    if (info.bytes() > budget) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "a " + shape(info) + " matrix with nnz=" + std::to_string(h.nnz()) + " takes " +
                  std::to_string(info.bytes()) + " bytes; the largest device budget is " + std::to_string(budget) +
                  " bytes, so it can never be used here"};
    }
    assembler_.emplace(h, /*check_columns=*/true, s_.upload_arrays.take(h.rows(), h.nnz(), h.value_type()));
    try {
      pipeline_ = upload_pipeline::open(s_.cache, info, host_arrays(*assembler_));
    } catch (...) {
      return to_grpc_status(std::current_exception());
    }
    return grpc::Status::OK;
  }

  void complete() {
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
      const steady::time_point received = steady::now();
      receive_ms_ = seconds_since(created_) * 1e3;
      const v1::MatrixHeader h = assembler_->header();
      spgemm::any_csr m;
      if (h.value_type() == v1::FLOAT32) {
        m = assemble<float>(*assembler_);
      } else {
        m = assemble<double>(*assembler_);
      }
      entry_info e;
      if (pipeline_) {  // most of it is on the device already
        e = s_.cache.insert_stored(tenant_of(ctx_), pipeline_->room(), pipeline_->finish(h.rows()), h.name(),
                                   h.ttl_seconds());
        pipeline_.reset();
        s_.sched.poke();  // its room, held while it arrived, is now a cached matrix that a queued job may spill
      } else {
        e = s_.cache.insert_host(tenant_of(ctx_), m, h.name(), h.ttl_seconds());
      }
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

  void finish(grpc::Status status) {
    code_ = status.error_code();
    message_ = status.error_message();
    pipeline_.reset();  // a failed upload's room is free again (the cache tells the scheduler)
    assembler_.reset();
    Finish(std::move(status));
  }

  service_state& s_;
  grpc::CallbackServerContext* ctx_;
  grpc::ByteBuffer* response_;  // a MatrixInfo
  grpc::ByteBuffer in_;
  std::vector<grpc::Slice> slices_;  // of in_, while its chunk is added
  wire::chunk_pieces pieces_;
  std::string handle_;
  std::optional<wire::chunk_assembler> assembler_;
  std::unique_ptr<upload_pipeline> pipeline_;  // where a device had room at the header; goes before assembler_
  int64_t bytes_in_ = 0;
  steady::time_point created_ = steady::now();
  double receive_ms_ = 0, store_ms_ = 0;  // phases of a complete upload (log)
  grpc::StatusCode code_ = grpc::StatusCode::OK;
  std::string message_;
};

// Adds the time since `started` to the job's engine phase.
void note_engine(job& j, steady::time_point started) { j.times.engine += seconds_since(started); }

// Multiplies two operands: inputs (resident) or the job's intermediates. The
// estimate of a product of two inputs is memoized in `memo`, with what it
// gave (the step's gave_before when it comes again).
job_step multiply_step(estimate_memo& memo, int left, int right, spgemm::multiply_options options,
                       bool left_is_temp = false, bool right_is_temp = false) {
  auto operand = [](job& j, int index, bool temp) -> const spgemm::stored_matrix& {
    return temp ? *j.temps[static_cast<std::size_t>(index)] : *j.resident[static_cast<std::size_t>(index)];
  };
  const bool memoized = !left_is_temp && !right_is_temp;
  auto key = [=](const job& j) {
    const cache_entry& a = *j.inputs[static_cast<std::size_t>(left)];
    return estimate_memo::key(a.tenant, a.handle, j.inputs[static_cast<std::size_t>(right)]->handle, j.device,
                              options);
  };
  job_step step;
  step.what = "multiply";
  step.estimate = [=, &memo](job& j, spgemm::backend& b) {
    auto estimate = [&] {
      return b.estimate_multiply(operand(j, left, left_is_temp), operand(j, right, right_is_temp), options);
    };
    if (!memoized) return estimate();
    const std::string k = key(j);
    if (auto known = memo.find(k)) return known->estimate;
    spgemm::memory_estimate e = estimate();
    memo.put(k, e);
    return e;
  };
  step.run = [=, &memo](job& j, spgemm::backend& b) {
    const steady::time_point started = steady::now();
    auto c = b.multiply(operand(j, left, left_is_temp), operand(j, right, right_is_temp), options, j.step_estimate,
                        j.cancel);
    note_engine(j, started);
    if (memoized) memo.note_result(key(j), c->info());
    std::size_t held = 0;
    for (const auto& t : j.temps) held += t->info().bytes();
    j.temps.push_back(std::move(c));
    return held + j.temps.back()->info().bytes();
  };
  if (memoized) {
    step.gave_before = [=, &memo](const job& j) -> std::optional<spgemm::matrix_info> {
      const auto known = memo.find(key(j));
      return known ? known->result : std::nullopt;
    };
  }
  return step;
}

// The job's last intermediate becomes its result; others are dropped.
void finish_steps(job& j) {
  if (!j.steps.empty()) {
    auto& last = j.steps.back();
    auto run = last.run;
    last.run = [run](job& jj, spgemm::backend& b) {
      run(jj, b);
      jj.result = jj.temps.back();
      jj.temps.clear();
      return jj.result->info().bytes();
    };
  }
}

// Transposes input `input`, as the job's next intermediate.
job_step transpose_step(int input) {
  job_step step;
  step.what = "transpose";
  step.estimate = [=](job& j, spgemm::backend& b) {
    return b.estimate_transpose(*j.resident[static_cast<std::size_t>(input)]);
  };
  step.run = [=](job& j, spgemm::backend& b) {
    const steady::time_point started = steady::now();
    j.temps.push_back(b.transpose(*j.resident[static_cast<std::size_t>(input)], j.cancel));
    note_engine(j, started);
    return j.temps.back()->info().bytes();
  };
  return step;
}

// A product call's job (inputs pinned, steps to come), and the algorithm its
// stats name until the steps report the methods they ran.
struct product_job {
  std::shared_ptr<job> j = std::make_shared<job>();
  std::string algorithm;
};

// Checks a product request and builds its job (see product_job).
using job_builder = std::function<grpc::Status(const std::string& tenant, product_job& out)>;

// The shared course of Multiply, Galerkin and Transpose: refuse while shutting
// down or when the request did not parse (`parsed`), check it and build its job, then run it and stream or keep
// the result as `output` asks.
grpc::ServerWriteReactor<grpc::ByteBuffer>* run_product(service_state& s, grpc::CallbackServerContext* ctx,
                                                        const char* kind, const grpc::Status& parsed,
                                                        const v1::ProductOutput& output, const job_builder& build) {
  auto* w = new result_writer(s, ctx, kind, output.chunk_bytes());
  if (s.shutting_down || !parsed.ok()) {
    w->fail(s.shutting_down ? unavailable() : parsed);
    return w;
  }
  product_job p;
  p.j->kind = kind;
  if (grpc::Status st = build(tenant_of(ctx), p); !st.ok()) {
    w->fail(st);
    return w;
  }
  finish_steps(*p.j);
  w->start_job(p.j, output.keep(), output.name(), p.algorithm);
  return w;
}

// Pins operands `a` and `b` of a product request and parses its options.
grpc::Status product_operands(service_state& s, const std::string& tenant, const char* a_field,
                              const std::string& a_handle, pin* a, const char* b_field, const std::string& b_handle,
                              pin* b, const v1::MultiplyOptions& o, spgemm::multiply_options* options) {
  grpc::Status st = lookup(s, tenant, a_field, a_handle, a);
  if (st.ok()) st = lookup(s, tenant, b_field, b_handle, b);
  if (st.ok()) st = parse_options(o, options);
  return st;
}

// Finishes a unary call with `status`.
grpc::ServerUnaryReactor* finished(grpc::CallbackServerContext* ctx, grpc::Status status) {
  auto* r = ctx->DefaultReactor();
  r->Finish(std::move(status));
  return r;
}

grpc::Status empty_handle() { return {grpc::StatusCode::INVALID_ARGUMENT, "request field 'handle' is empty"}; }

}  // namespace

void register_metrics(service_state& state) {
  auto& m = state.metrics;
  m.describe("spgemmd_jobs_total", "counter", "Calls by kind (upload, multiply, galerkin, transpose, download) and outcome (status code).");
  m.describe("spgemmd_phase_seconds", "histogram", "Latency per phase: queue (waiting for admission), compute (the engine), stream (sending the result).");
  m.describe("spgemmd_bytes_in_total", "counter", "Bytes received in uploads.");
  m.describe("spgemmd_bytes_out_total", "counter", "Bytes sent in results and downloads.");
  m.describe("spgemmd_flops_total", "counter",
             "Floating-point operations (2 x scalar products) of finished products, by kind and device.");
  m.describe("spgemmd_queue_depth", "gauge", "Jobs waiting for admission.");
  m.describe("spgemmd_jobs_running", "gauge", "Jobs running, per device.");
  m.describe("spgemmd_matrices", "gauge", "Matrices stored.");
  m.describe("spgemmd_cache_bytes", "gauge", "Bytes of matrices resident per device.");
  m.describe("spgemmd_cache_host_bytes", "gauge", "Bytes of matrices spilled to host memory.");
  m.describe("spgemmd_cache_hit_ratio", "gauge", "Uses of a matrix found resident on the device / all uses, per device.");
  m.describe("spgemmd_device_budget_bytes", "gauge", "The server's byte budget per device (cache plus running jobs).");
  m.describe("spgemmd_device_reserved_bytes", "gauge", "Bytes reserved by running jobs and results in flight, per device.");
  m.describe("spgemmd_device_used_peak_bytes", "gauge", "The most cache plus reserved bytes at once, per device (never above the budget).");
  m.describe("spgemmd_device_memory_total_bytes", "gauge", "Device memory in all, as the backend reports it.");
  m.describe("spgemmd_device_memory_free_bytes", "gauge", "Device memory free, as the driver (or OS) reports it.");
  m.describe("spgemmd_device_memory_in_use_bytes", "gauge", "Bytes the backend has allocated now.");
  m.describe("spgemmd_device_memory_peak_bytes", "gauge", "The most the backend has allocated at once.");
  service_state* s = &state;
  m.set_collector([s](const metrics_registry::gauge_setter& set) {
    const cache_stats cs = s->cache.stats();
    const scheduler_stats ss = s->sched.stats();
    set("spgemmd_queue_depth", "", ss.queue_depth);
    set("spgemmd_matrices", "", static_cast<double>(cs.matrices));
    set("spgemmd_cache_host_bytes", "", static_cast<double>(cs.host_bytes));
    for (std::size_t i = 0; i < cs.devices.size(); ++i) {
      const auto& d = cs.devices[i];
      const std::string l = labels({{"device", d.name}});
      set("spgemmd_jobs_running", l, i < ss.running_per_device.size() ? ss.running_per_device[i] : 0);
      set("spgemmd_cache_bytes", l, static_cast<double>(d.cached));
      set("spgemmd_cache_hit_ratio", l, d.uses > 0 ? static_cast<double>(d.hits) / static_cast<double>(d.uses) : 0.0);
      set("spgemmd_device_budget_bytes", l, static_cast<double>(d.budget));
      set("spgemmd_device_reserved_bytes", l, static_cast<double>(d.reserved));
      set("spgemmd_device_used_peak_bytes", l, static_cast<double>(d.peak_used));
      const spgemm::backend_memory mem = s->cache.backends()[i]->memory();
      set("spgemmd_device_memory_total_bytes", l, static_cast<double>(mem.total_bytes));
      set("spgemmd_device_memory_free_bytes", l, static_cast<double>(mem.free_bytes));
      set("spgemmd_device_memory_in_use_bytes", l, static_cast<double>(mem.in_use_bytes));
      set("spgemmd_device_memory_peak_bytes", l, static_cast<double>(mem.peak_bytes));
    }
  });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* spgemm_service::Upload(grpc::CallbackServerContext* ctx,
                                                                 grpc::ByteBuffer* response) {
  return new upload_reactor(state_, ctx, response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Multiply(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::MultiplyRequest parsed_request;
  const grpc::Status parsed = parse(*raw, &parsed_request);
  const v1::MultiplyRequest* request = &parsed_request;
  return run_product(state_, ctx, "multiply", parsed, request->output(), [&](const std::string& tenant, product_job& out) {
    pin a, b;
    spgemm::multiply_options options;
    grpc::Status st = product_operands(state_, tenant, "a", request->a(), &a, "b", request->b(), &b,
                                       request->options(), &options);
    if (st.ok() && a->info.cols != b->info.rows) {
      st = {grpc::StatusCode::INVALID_ARGUMENT, "cannot multiply A (" + shape(a->info) + ") by B (" +
                                                    shape(b->info) + "): A's columns must equal B's rows"};
    }
    if (!st.ok()) return st;
    job& j = *out.j;
    j.priority = request->options().priority();
    j.inputs.push_back(std::move(a));
    j.inputs.push_back(std::move(b));
    j.steps.push_back(multiply_step(state_.estimates, 0, 1, options));
    out.algorithm = spgemm::to_string(options.algo);
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Galerkin(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::GalerkinRequest parsed_request;
  const grpc::Status parsed = parse(*raw, &parsed_request);
  const v1::GalerkinRequest* request = &parsed_request;
  return run_product(state_, ctx, "galerkin", parsed, request->output(), [&](const std::string& tenant, product_job& out) {
    pin p, a;
    spgemm::multiply_options options;
    grpc::Status st = product_operands(state_, tenant, "p", request->p(), &p, "a", request->a(), &a,
                                       request->options(), &options);
    const bool ptap = request->form() == v1::PT_A_P;
    if (st.ok() && request->form() != v1::PT_A_P && request->form() != v1::P_A_PT) {
      st = {grpc::StatusCode::INVALID_ARGUMENT, "form must be PT_A_P or P_A_PT"};
    }
    if (st.ok()) {
      const int64_t fine = ptap ? p->info.rows : p->info.cols;
      if (a->info.rows != a->info.cols || a->info.rows != fine) {
        st = {grpc::StatusCode::INVALID_ARGUMENT,
              std::string(ptap ? "P^T A P" : "P A P^T") + " needs a square A with as many rows as P has " +
                  (ptap ? "rows" : "columns") + "; got A (" + shape(a->info) + ") and P (" + shape(p->info) + ")"};
      }
    }
    if (!st.ok()) return st;
    job& j = *out.j;
    j.priority = request->options().priority();
    j.inputs.push_back(std::move(p));  // resident[0] = P
    j.inputs.push_back(std::move(a));  // resident[1] = A
    // temps[0] = P^T; temps[1] = A P (or A P^T); then the product.
    j.steps.push_back(transpose_step(0));
    if (ptap) {
      j.steps.push_back(multiply_step(state_.estimates, 1, 0, options));               // A * P
      j.steps.push_back(multiply_step(state_.estimates, 0, 1, options, true, true));   // P^T * (A P)
    } else {
      j.steps.push_back(multiply_step(state_.estimates, 1, 0, options, false, true));  // A * P^T
      j.steps.push_back(multiply_step(state_.estimates, 0, 1, options, false, true));  // P * (A P^T)
    }
    out.algorithm = spgemm::to_string(options.algo);
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Transpose(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::TransposeRequest parsed_request;
  const grpc::Status parsed = parse(*raw, &parsed_request);
  const v1::TransposeRequest* request = &parsed_request;
  return run_product(state_, ctx, "transpose", parsed, request->output(), [&](const std::string& tenant, product_job& out) {
    pin a;
    if (grpc::Status st = lookup(state_, tenant, "a", request->a(), &a); !st.ok()) return st;
    out.j->inputs.push_back(std::move(a));
    out.j->steps.push_back(transpose_step(0));
    out.algorithm = "transpose";
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Download(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::DownloadRequest request;
  const grpc::Status parsed = parse(*raw, &request);
  auto* w = new result_writer(state_, ctx, "download", request.chunk_bytes());
  if (state_.shutting_down || !parsed.ok()) {
    w->fail(state_.shutting_down ? unavailable() : parsed);
    return w;
  }
  pin e;
  if (grpc::Status st = lookup(state_, tenant_of(ctx), "handle", request.handle(), &e); !st.ok()) {
    w->fail(st);
    return w;
  }
  int device = -1;
  std::shared_ptr<spgemm::stored_matrix> stored;
  std::shared_ptr<const spgemm::any_csr> host;
  state_.cache.locate(*e, &device, &stored, &host);
  w->start_download(std::move(e), device >= 0 ? state_.cache.backends()[device] : nullptr, std::move(stored),
                    std::move(host));
  return w;
}

grpc::ServerUnaryReactor* spgemm_service::Delete(grpc::CallbackServerContext* ctx, const v1::DeleteRequest* request,
                                                 v1::DeleteResponse* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  if (request->handle().empty()) return finished(ctx, empty_handle());
  auto freed = state_.cache.erase(tenant_of(ctx), request->handle());
  if (!freed) return finished(ctx, not_found(request->handle()));
  response->set_freed_bytes(static_cast<int64_t>(*freed));
  log_event("info", "delete", {{"handle", request->handle()}, {"freed_bytes", static_cast<int64_t>(*freed)}});
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::List(grpc::CallbackServerContext* ctx, const v1::ListRequest*,
                                               v1::ListResponse* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  for (const auto& e : state_.cache.list(tenant_of(ctx))) to_proto(e, response->add_matrices());
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::Describe(grpc::CallbackServerContext* ctx,
                                                   const v1::DescribeRequest* request, v1::MatrixInfo* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  if (request->handle().empty()) return finished(ctx, empty_handle());
  auto e = state_.cache.describe(tenant_of(ctx), request->handle());
  if (!e) return finished(ctx, not_found(request->handle()));
  to_proto(*e, response);
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest*,
                                                 v1::ServerStatus* response) {
  auto* r = ctx->DefaultReactor();
  const cache_stats cs = state_.cache.stats();
  const scheduler_stats ss = state_.sched.stats();
  response->set_version(state_.version);
  for (std::size_t i = 0; i < cs.devices.size(); ++i) {
    const auto& d = cs.devices[i];
    const auto& b = state_.cache.backends()[i];
    const spgemm::backend_memory mem = b->memory();
    v1::DeviceStatus* out = response->add_devices();
    out->set_name(d.name);
    out->set_description(b->description());
    out->set_is_gpu(b->is_gpu());
    out->set_total_bytes(static_cast<int64_t>(mem.total_bytes));
    out->set_free_bytes(static_cast<int64_t>(mem.free_bytes));
    out->set_budget_bytes(static_cast<int64_t>(d.budget));
    out->set_cached_bytes(static_cast<int64_t>(d.cached));
    out->set_reserved_bytes(static_cast<int64_t>(d.reserved));
    out->set_jobs_running(i < ss.running_per_device.size() ? ss.running_per_device[i] : 0);
    out->set_peak_bytes(static_cast<int64_t>(mem.peak_bytes));
  }
  response->set_queue_depth(ss.queue_depth);
  response->set_jobs_running(ss.running);
  response->set_matrices(cs.matrices);
  response->set_host_cached_bytes(static_cast<int64_t>(cs.host_bytes));
  response->set_host_budget_bytes(static_cast<int64_t>(cs.host_budget));
  response->set_uptime_seconds(seconds_since(state_.started));
  response->set_jobs_completed(ss.completed);
  response->set_jobs_failed(ss.failed);
  r->Finish(grpc::Status::OK);
  return r;
}

}  // namespace spgemmd
