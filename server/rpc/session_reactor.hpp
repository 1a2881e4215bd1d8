// The reactor of Local.OpenSession: a session of the caller's tenant opened,
// its id sent, then the call held open; when it ends (the client cancelled
// it or went away, or the server shuts down) the session's regions are
// unregistered. session_list ends those still open at shutdown, so that
// they do not hold it for the grace period.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/region_registry.hpp"
#include "spgemm/v1/local.pb.h"

namespace spgemmd {

class session_reactor;

class session_list {
 public:
  // Ends every open session; later ones end as they open.
  void end_all();

 private:
  friend class session_reactor;
  bool add(session_reactor* r);  // false once end_all ran
  void remove(session_reactor* r);

  std::recursive_mutex mu_;  // an end may run its reactor's OnDone on this thread
  std::set<session_reactor*> open_;
  bool ended_ = false;
};

class session_reactor final : public grpc::ServerWriteReactor<spgemm::v1::SessionEvent> {
 public:
  // A session of `who`'s; where `opened` (the call's open_call and local
  // checks) is not OK, the call ends with it and no session is opened.
  session_reactor(core::region_registry& regions, session_list& sessions, core::caller who, grpc::Status opened);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  // Ends the call (once).
  void end(grpc::Status status);

 private:
  core::region_registry& regions_;
  session_list& sessions_;
  const core::caller caller_;
  std::string id_;
  spgemm::v1::SessionEvent event_;
  std::atomic<bool> ended_{false};
};

}  // namespace spgemmd
