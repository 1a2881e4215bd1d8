// The reactor of the streamed calls: a product's result (header, chunks,
// stats) or its kept handle (kept, stats), or a stored matrix for Download
// (header, chunks). For callers on the server's host, results go into a
// shared-memory region instead of chunks (in_region), or into CUDA device
// arrays for Download (on_device). The last message goes with the status
// (StartWriteAndFinish): one completion less per call. A product computed in
// row panels streams while its job runs: the header (nnz -1: not known yet)
// once its panels start, their chunks as they come, the stats at its end; the
// call finishes only once its job has ended. (One whose result goes into a
// region is gathered in host memory and kept instead: a region needs its size.)
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/job_run.hpp"
#include "core/region_registry.hpp"
#include "core/row_blocks.hpp"
#include "rpc/service_state.hpp"
#include "wire/chunk_codec.hpp"

namespace spgemmd {

class result_reactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // `chunk_bytes`: what the request asked for (0: the server's default).
  result_reactor(service_state& s, grpc::CallbackServerContext* ctx, std::string kind, int64_t chunk_bytes);

  // Ends the call before anything was sent.
  void fail(grpc::Status status);
  // Runs `j` (a recipe's) as `who`'s; streams or keeps its result (its tenant's).
  void start_job(std::shared_ptr<core::job> j, core::caller who, bool keep, std::string keep_name);
  // Streams the matrix `held`.
  void start_download(core::pin held);
  // Before start_job or start_download: write the result into `to` (which
  // the request named as `ref`) instead of streaming it. A product that does
  // not fit is kept instead (kept, stats), for a download into a larger range.
  void write_into(core::region_span to, spgemm::v1::RegionRef ref);
  // Copies the matrix `held` into a caller's device arrays (CUDA IPC).
  void start_device_download(core::pin held, const spgemm::ipc_csr_arrays& to);
  // Before start_job: copy the result into a caller's device arrays (CUDA
  // IPC) instead of streaming it (reply on_device, stats). A product that
  // does not fit them, or that is not on a GPU, is kept instead (kept, stats).
  void copy_into(spgemm::ipc_csr_arrays to);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class state { idle, kept, header, chunks, on_device, stats };

  std::size_t block_bytes() const;
  void on_job_end(core::job_run::ending e);
  // The job's row panels start coming (from the job's thread).
  void on_panels_open(const spgemm::matrix_info& shape);
  // Every panel's rows sent, or the panels stopped, or a write failed: the
  // stats or the status once the job has ended (now, or from on_job_end).
  void after_panels(std::optional<grpc::Status> failed);
  // Once the job has ended and the rows are done: the stats, or the status.
  void conclude_panels();
  // The call failed on its side (a write, a block): it finishes now, or, where
  // panels stream, once its job, cancelled, has ended.
  void fail_call(grpc::Status status);
  // After the job: its result's messages, or its error.
  void go_on(const grpc::Status& status);
  bool chunks_left() const;
  // The result's rows into the region (state header with into_): its
  // in_region message, in `part`.
  grpc::Status write_region(spgemm::v1::ResultPart* part);
  void send(bool last);
  void send(const spgemm::v1::ResultPart& part, bool last);
  void write_next();
  void finish(grpc::Status status, bool with_last_message = false);

  service_state& s_;
  call_count::in_flight counted_;
  std::string kind_;
  int64_t chunk_bytes_;
  core::steady::time_point created_ = core::steady::now();
  core::steady::time_point stream_started_, last_write_at_;
  core::caller caller_;  // start_job's, whose tenant a result kept instead of written into a region is
  std::optional<core::job_run> run_;
  bool keep_ = false;
  std::string keep_name_;
  bool send_stats_ = true;
  // A kept message announced while the job runs: in flight, then sent. The
  // job's end waits for it: what it leaves goes on from OnWriteDone. Guarded
  // by reply_mu_, which is held while job_run::announce decides against the
  // job's end, so the end sees the announcement in flight.
  enum class announcement { none, in_flight, sent };
  std::mutex reply_mu_;
  announcement announce_ = announcement::none;
  std::optional<grpc::Status> after_announcement_;
  bool streamed_ = false;
  // Row panels (guarded by reply_mu_): streaming began; the job's end and
  // status once it came; the writer waits for it (`parked_`, with what failed
  // on the call's side meanwhile).
  bool panels_open_ = false;
  bool panel_rows_ = false;  // rows_ are panels (the writer's, set before it starts)
  std::optional<grpc::Status> job_end_;
  bool parked_ = false;
  std::optional<grpc::Status> call_failed_;
  state state_ = state::idle;
  core::entry_info kept_;
  core::reservation result_res_;  // of the result's bytes; declared first, so it outlives the rows
  std::optional<core::row_blocks> rows_;
  core::pin held_;
  struct region_target {
    core::region_span span;
    spgemm::v1::RegionRef ref;
  };
  std::optional<region_target> into_;  // write_into's
  std::optional<spgemm::ipc_csr_arrays> into_device_;  // copy_into's
  spgemm::matrix_info on_device_;  // what went into them
  std::shared_ptr<const spgemm::any_csr> block_;  // the rows being sent
  spgemm::wire::csr_view block_view_;
  int64_t block_first_row_ = 0;
  std::vector<std::pair<int64_t, int64_t>> plan_;
  std::size_t plan_index_ = 0;
  int64_t bytes_out_ = 0;
  spgemm::v1::JobStats stats_;
  grpc::ByteBuffer out_;  // the message being written
  grpc::StatusCode final_code_ = grpc::StatusCode::OK;
  std::string final_message_;
};

}  // namespace spgemmd
