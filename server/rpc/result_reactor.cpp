#include "rpc/result_reactor.hpp"

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <variant>

#include "core/device_transfer.hpp"
#include "core/region_transfer.hpp"
#include "ops/log.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"
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

double seconds_since(core::steady::time_point t) {
  return std::chrono::duration<double>(core::steady::now() - t).count();
}

int64_t clamp_chunk(int64_t requested, int64_t fallback) {
  const int64_t c = requested > 0 ? requested : fallback;
  return std::clamp(c, min_chunk_bytes, max_chunk_bytes);
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

}  // namespace

result_reactor::result_reactor(service_state& s, grpc::CallbackServerContext* ctx, std::string kind,
                               int64_t chunk_bytes)
    : s_(s), counted_(s.calls), kind_(std::move(kind)), chunk_bytes_(clamp_chunk(chunk_bytes, s.cfg.chunk_bytes)) {
  compress_replies_as_asked(ctx);
}

void result_reactor::fail(grpc::Status status) { finish(std::move(status)); }

void result_reactor::start_job(std::shared_ptr<core::job> j, core::caller who, bool keep, std::string keep_name) {
  keep_ = keep;
  keep_name_ = std::move(keep_name);
  caller_ = who;
  run_.emplace(s_.cache, s_.sched, std::move(who), keep_, keep_name_, created_);
  // A result written into a region or device arrays needs its size before its
  // first row: one computed in row panels is gathered and kept instead of
  // streamed.
  if (into_ || into_device_) run_->stream_panels(false);
  // The headers go now, from gRPC's thread while the job runs: the result's
  // first message, often written from a worker, then carries less.
  StartSendInitialMetadata();
  const core::outcome submitted =
      run_->submit(std::move(j), [this](core::job_run::ending e) { on_job_end(std::move(e)); });
  if (!submitted.ok()) {
    finish(to_grpc_status(submitted));
    return;
  }
  if (const auto& panels = run_->panels()) {
    panels->when_open([this](const spgemm::matrix_info& shape) { on_panels_open(shape); });
  }
  // The kept message goes while the job still runs (from gRPC's thread,
  // which answers its completion at once): at the job's end only the stats
  // are left to write, not two messages one after the other.
  std::optional<core::entry_info> promised = run_->promise();
  if (!promised) return;
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    if (!run_->announce(*promised)) return;  // it ended meanwhile: the usual reply
    kept_ = std::move(*promised);
    announce_ = announcement::in_flight;
    state_ = state::kept;
  }
  write_next();
}

void result_reactor::start_download(core::pin held) {
  held_ = std::move(held);
  try {
    rows_.emplace(s_.cache, *held_, block_bytes());
  } catch (...) {
    finish(to_grpc_status(std::current_exception()));
    return;
  }
  send_stats_ = false;
  state_ = state::header;
  write_next();
}

void result_reactor::write_into(core::region_span to, v1::RegionRef ref) {
  into_ = region_target{std::move(to), std::move(ref)};
}

void result_reactor::start_device_download(core::pin held, const spgemm::ipc_csr_arrays& to) {
  const core::outcome copied = core::copy_to_device(s_.cache, *held, to);
  if (!copied.ok()) {
    finish(to_grpc_status(copied));
    return;
  }
  v1::ResultPart part;
  to_proto(held->info, held->name, part.mutable_on_device());
  send(part, true);
}

void result_reactor::copy_into(spgemm::ipc_csr_arrays to) { into_device_ = std::move(to); }

void result_reactor::OnWriteDone(bool ok) {
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
    if (!ok) run_->cancel();
    return;
  }
  if (!ok) {
    fail_call({grpc::StatusCode::CANCELLED, "the client went away while the result streamed"});
  } else if (job_end) {
    go_on(*job_end);
  } else {
    write_next();
  }
}

void result_reactor::OnCancel() {
  if (run_) run_->cancel();
}

void result_reactor::OnDone() {
  const std::string outcome = code_name(final_code_);
  const char* level = final_code_ == grpc::StatusCode::OK ? "info" : "warn";
  const double total_ms = seconds_since(created_) * 1e3;
  s_.metrics.call_ended(kind_, outcome);
  if (streamed_) s_.metrics.phase(kind_, "stream", seconds_since(stream_started_));
  s_.metrics.bytes_out(bytes_out_);
  if (stats_.flops() > 0) s_.metrics.flops(kind_, stats_.device(), stats_.flops());
  if (run_ && run_->over()) {
    const core::job_times& t = run_->report().times;
    const core::call_phases p = run_->phases(last_write_at_);
    s_.metrics.job_phases(kind_, t, p);
    log_event(level, kind_,
              {{"code", outcome}, {"total_ms", total_ms}, {"bytes_out", bytes_out_}, {"kept", keep_},
               {"nnz", stats_.nnz()}, {"device", stats_.device()}, {"request_ms", p.request * 1e3},
               {"queue_ms", t.queue * 1e3}, {"admit_ms", t.admit * 1e3}, {"estimate_ms", t.estimate * 1e3},
               {"handoff_ms", t.handoff * 1e3}, {"compute_ms", t.compute * 1e3}, {"engine_ms", t.engine * 1e3},
               {"release_ms", p.release * 1e3}, {"keep_ms", p.keep * 1e3}, {"reply_ms", p.reply * 1e3},
               {"message", final_message_}});
  } else {
    log_event(level, kind_,
              {{"code", outcome}, {"total_ms", total_ms}, {"bytes_out", bytes_out_}, {"device", stats_.device()},
               {"message", final_message_}});
  }
  delete this;
}

// Rows fetched from a backend at a time: few device-to-host copies and
// syncs, at least two chunks.
std::size_t result_reactor::block_bytes() const {
  return static_cast<std::size_t>(std::max<int64_t>(fetch_block_bytes, 2 * chunk_bytes_));
}

void result_reactor::on_panels_open(const spgemm::matrix_info& shape) {
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    panels_open_ = true;
  }
  rows_.emplace(run_->panels(), shape, block_bytes());
  panel_rows_ = true;
  state_ = state::header;
  write_next();
}

void result_reactor::after_panels(std::optional<grpc::Status> failed) {
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    if (failed && !call_failed_) call_failed_ = std::move(failed);
    if (!job_end_) {
      parked_ = true;  // on_job_end goes on
      return;
    }
  }
  conclude_panels();
}

void result_reactor::conclude_panels() {
  rows_.reset();
  if (call_failed_) {
    finish(*call_failed_);
  } else if (!job_end_->ok()) {
    finish(*job_end_);
  } else {
    state_ = state::stats;
    write_next();
  }
}

void result_reactor::fail_call(grpc::Status status) {
  bool panels = false;
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    panels = panels_open_;
  }
  if (!panels) {
    finish(std::move(status));
    return;
  }
  // The job may still run: it stops, and the call ends with it.
  run_->cancel();
  if (rows_) rows_->abandon();
  after_panels(std::move(status));
}

void result_reactor::on_job_end(core::job_run::ending e) {
  bool announced = false;
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    announced = announce_ != announcement::none;
  }
  const core::job_report& r = run_->report();
  stats_.set_algorithm(r.algorithm);
  stats_.set_queue_ms(r.times.queue * 1e3);
  stats_.set_compute_ms(r.times.compute * 1e3);
  stats_.set_estimate_bytes(static_cast<int64_t>(r.max_estimate));
  stats_.set_flops(r.flops);
  stats_.set_device(r.device);
  stats_.set_nnz(r.nnz);
  grpc::Status status = to_grpc_status(e.result);
  bool panels = false;
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    panels = panels_open_;
    if (panels) {  // its rows are streaming, or were
      job_end_ = status;
      if (!parked_) return;  // the writer goes on when its rows are done
      parked_ = false;
    }
  }
  if (panels) {
    conclude_panels();
    return;
  }
  bool fits = true;  // into_'s range or into_device_'s arrays, where set
  if (status.ok() && !keep_ && into_ && e.product) {
    core::csr_layout layout;
    status = to_grpc_status(core::layout_of(e.product->info(), into_->span.length, &layout, &fits));
  }
  if (status.ok() && !keep_ && into_device_ && e.product) {
    fits = e.backend->is_gpu() && core::fits_arrays(e.product->info(), *into_device_);
  }
  if (status.ok() && !keep_ && !e.product) {
    // Computed in row panels and gathered in host memory (a region's result:
    // start_job): kept instead, for the caller to download into a range of
    // the size its nnz asks.
    kept_ = std::move(e.kept);
    state_ = state::kept;
  } else if (status.ok() && !keep_ && !fits) {
    // Kept instead: the caller downloads it into a range of the size its nnz asks.
    try {
      kept_ = s_.cache.insert_stored(caller_, e.held, std::move(e.product), keep_name_, 0);
      state_ = state::kept;
    } catch (...) {
      status = to_grpc_status(std::current_exception());
    }
  } else if (status.ok() && !keep_ && into_device_) {
    status = to_grpc_status(core::copy_result_to_device(*e.backend, *e.product, *into_device_));
    on_device_ = e.product->info();
    state_ = state::on_device;
  } else if (status.ok() && !keep_) {
    rows_.emplace(std::move(e.backend), std::move(e.product), block_bytes());
    result_res_ = std::move(e.held);
    state_ = state::header;
  } else if (status.ok() && !announced) {
    kept_ = std::move(e.kept);
    state_ = state::kept;
  }
  {
    std::lock_guard<std::mutex> lock(reply_mu_);
    if (announce_ == announcement::in_flight) {  // its OnWriteDone goes on
      after_announcement_ = std::move(status);
      return;
    }
  }
  go_on(status);
}

void result_reactor::go_on(const grpc::Status& status) {
  if (status.ok()) {
    write_next();
  } else {
    finish(status);
  }
}

// Whether a chunk is still to be sent.
bool result_reactor::chunks_left() const { return plan_index_ < plan_.size() || (rows_ && rows_->more()); }

// Sends out_; the status goes with it when nothing follows.
void result_reactor::send(bool last) {
  bytes_out_ += static_cast<int64_t>(out_.Length());
  if (last) {
    finish(grpc::Status::OK, /*with_last_message=*/true);
  } else {
    StartWrite(&out_);
  }
}

void result_reactor::send(const v1::ResultPart& part, bool last) {
  bool own = false;
  out_.Clear();  // the serializer wants an empty buffer
  grpc::SerializationTraits<v1::ResultPart>::Serialize(part, &out_, &own);
  send(last);
}

void result_reactor::write_next() {
  try {
    v1::ResultPart part;
    switch (state_) {
      case state::kept:
        to_proto(kept_, part.mutable_kept());
        state_ = state::stats;
        send(part, false);
        return;
      case state::header: {
        if (into_) {
          if (grpc::Status st = write_region(&part); !st.ok()) {
            finish(st);
            return;
          }
          state_ = state::stats;
          send(part, !send_stats_);
          return;
        }
        streamed_ = true;
        stream_started_ = core::steady::now();
        to_proto(rows_->info(), keep_name_, part.mutable_header());
        state_ = state::chunks;
        send(part, !chunks_left() && !send_stats_);
        return;
      }
      case state::on_device:
        to_proto(on_device_, keep_name_, part.mutable_on_device());
        state_ = state::stats;
        send(part, !send_stats_);
        return;
      case state::chunks:
        if (plan_index_ == plan_.size()) {
          // Panels: the next one may still be computing; this goes on when it comes.
          if (rows_->more() && !rows_->ready([this] { write_next(); })) return;
          if (!rows_->more() && panel_rows_) {
            const auto& failure = rows_->failure();
            after_panels(failure ? std::optional<grpc::Status>(to_grpc_status(*failure)) : std::nullopt);
            return;
          }
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
          core::row_blocks::block b = rows_->next();
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
    fail_call(to_grpc_status(std::current_exception()));
  }
}

grpc::Status result_reactor::write_region(v1::ResultPart* part) {
  const spgemm::matrix_info info = rows_->info();
  core::csr_layout layout;
  bool fits = false;
  if (core::outcome o = core::layout_of(info, into_->span.length, &layout, &fits); !o.ok()) return to_grpc_status(o);
  if (!fits) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the matrix (" + std::to_string(info.rows) + " rows, nnz " + std::to_string(info.nnz) + ") takes " +
                std::to_string(layout.bytes) + " bytes in a region; the range holds " +
                std::to_string(into_->span.length)};
  }
  if (core::outcome o = core::write_rows(*rows_, into_->span, layout); !o.ok()) return to_grpc_status(o);
  // Written: the result's memory goes now.
  rows_.reset();
  result_res_.release();
  held_.reset();
  v1::RegionMatrix* m = part->mutable_in_region();
  to_proto(info, keep_name_, m->mutable_header());
  const auto place = [&](v1::RegionRef* ref, int64_t at, int64_t bytes) {
    ref->set_region(into_->ref.region());
    ref->set_offset(into_->ref.offset() + at);
    ref->set_length(bytes);
  };
  const auto value_size = static_cast<int64_t>(spgemm::size_of(info.type));
  place(m->mutable_row_offsets(), layout.row_offsets, (info.rows + 1) * 8);
  place(m->mutable_col_indices(), layout.col_indices, info.nnz * 4);
  place(m->mutable_values(), layout.values, info.nnz * value_size);
  return grpc::Status::OK;
}

// Ends the call with `status`; out_ goes with it where `with_last_message`.
void result_reactor::finish(grpc::Status status, bool with_last_message) {
  final_code_ = status.error_code();
  final_message_ = status.error_message();
  last_write_at_ = core::steady::now();
  state_ = state::idle;
  block_.reset();
  rows_.reset();
  result_res_.release();
  held_.reset();
  if (with_last_message) {
    StartWriteAndFinish(&out_, grpc::WriteOptions(), std::move(status));
  } else {
    Finish(std::move(status));
  }
}

}  // namespace spgemmd
