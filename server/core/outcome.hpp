// How a request or a job ended, in the server's own terms: the engine's error
// kinds and the server's. The core speaks only this; a front end maps it to its
// own status codes in one place (gRPC: rpc/status_map.hpp).
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

enum class status {
  ok,
  invalid_argument,  // the request is wrong (the engine's bad_input): the caller must fix it
  not_found,         // no matrix with that handle: unknown, expired or deleted
  does_not_fit,      // more memory than a budget holds (the engine's does_not_fit; out of host memory)
  queue_full,        // the job queue is full: retry later
  over_quota,        // the caller's tenant is at one of its quotas (the message names it)
  shutting_down,     // the server is stopping: retry elsewhere
  cancelled,         // the caller went away, or its deadline passed (the engine's cancelled)
  device_failure,    // a device call failed (the engine's device_failure); the server stays up
  internal,          // anything else: a bug
};

// The status and a message for the caller that says what happened and what to do.
struct outcome {
  status code = status::ok;
  std::string message;

  bool ok() const { return code == status::ok; }
};

// Thrown where a tenant would go over one of its quotas (core/caller.hpp);
// its message names the quota. outcome_of makes it over_quota.
class quota_exceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The outcome of an engine error: its kind, its message.
outcome outcome_of(const spgemm::error& e);
// The outcome of any exception (from a catch block: std::current_exception()):
// an engine error as above, quota_exceeded as over_quota, std::bad_alloc as
// does_not_fit (out of host memory), anything else internal.
outcome outcome_of(std::exception_ptr e);

}  // namespace spgemmd::core
