// The reactor of Amg.Solve: reads the header, b's chunks (and the first
// guess's) in order, runs the solve as a job on the hierarchy's device, then
// writes x's chunks and the stats, the last with the status. A client gone
// cancels the job.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/recipes/amg.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/amg.grpc.pb.h"

namespace spgemmd {

class amg_solve_reactor final : public grpc::ServerBidiReactor<spgemm::v1::AmgSolvePart, spgemm::v1::AmgSolveReply> {
 public:
  amg_solve_reactor(service_state& s, grpc::CallbackServerContext* ctx);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  grpc::Status on_part();
  void submit();
  void on_solved(core::outcome result, spgemm::amg::solve_report report, std::vector<double> x);
  void write_next();
  void finish(grpc::Status status);

  service_state& s_;
  std::string tenant_;
  core::steady::time_point created_ = core::steady::now();
  spgemm::v1::AmgSolvePart in_;
  bool have_header_ = false;
  std::shared_ptr<core::amg_record> record_;
  core::amg_solve_request request_;
  std::int64_t rows_ = 0;
  std::int64_t b_received_ = 0, x_received_ = 0;
  bool initial_guess_ = false;
  std::shared_ptr<core::job> job_;
  std::mutex mu_;  // OnCancel against the job's start
  // The reply: x, then the stats.
  std::vector<double> x_;
  std::int64_t x_sent_ = 0;
  spgemm::v1::AmgSolveReply out_;
  spgemm::v1::AmgSolveStats stats_;
  bool stats_sent_ = false;
  grpc::StatusCode code_ = grpc::StatusCode::OK;
};

}  // namespace spgemmd
