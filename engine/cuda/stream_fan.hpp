// Independent launches of one job side by side: each on a stream of its own
// (the job's stream and side streams), so that kernels of a few long-running
// blocks (the largest row bins, dense rows) run beside the kernels of many
// short blocks instead of after them: on one stream each launch waits for
// the last block of the one before, and a dense row would run alone on one
// SM after the other bins had finished.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace spgemm::cuda {

using launch_fn = std::function<void(cudaStream_t)>;

// Runs every launch on its own stream (up to max_streams, then in turn),
// after everything issued on job_stream so far; job_stream then waits for all
// of them. The launches must not depend on each other; memory they use must
// be allocated on job_stream before the call and freed after it. One launch
// runs on job_stream itself, with no events.
void launch_side_by_side(cudaStream_t job_stream, const std::vector<launch_fn>& launches, int max_streams = 16);

}  // namespace spgemm::cuda
