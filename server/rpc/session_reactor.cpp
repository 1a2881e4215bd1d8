#include "rpc/session_reactor.hpp"

#include <vector>

#include "ops/log.hpp"

namespace spgemmd {

void session_list::end_all() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ended_ = true;
  const std::vector<session_reactor*> open(open_.begin(), open_.end());
  for (session_reactor* r : open) r->end(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
}

bool session_list::add(session_reactor* r) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (ended_) return false;
  open_.insert(r);
  return true;
}

void session_list::remove(session_reactor* r) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  open_.erase(r);
}

session_reactor::session_reactor(core::region_registry& regions, session_list& sessions, core::caller who,
                                 grpc::Status opened)
    : regions_(regions), sessions_(sessions), caller_(std::move(who)) {
  if (!opened.ok()) {
    end(std::move(opened));
    return;
  }
  if (!sessions_.add(this)) {
    end(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return;
  }
  id_ = regions_.open_session(caller_);
  event_.set_session(id_);
  StartWrite(&event_);
}

void session_reactor::OnWriteDone(bool ok) {
  // The id went out; the call stays open until the client ends it.
  if (!ok) end(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
}

void session_reactor::OnCancel() { end(grpc::Status(grpc::StatusCode::CANCELLED, "the session ended")); }

void session_reactor::end(grpc::Status status) {
  if (!ended_.exchange(true)) Finish(std::move(status));
}

void session_reactor::OnDone() {
  sessions_.remove(this);
  if (!id_.empty()) {
    const std::size_t regions = regions_.close_session(caller_, id_);
    log_event("info", "session_end",
              {{"session", id_}, {"tenant", caller_.tenant}, {"regions", static_cast<int64_t>(regions)}});
  }
  delete this;
}

}  // namespace spgemmd
