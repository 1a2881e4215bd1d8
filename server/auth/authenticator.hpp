// Who a call is: from its "authorization: Bearer <token>" metadata and the
// tokens file (auth/tokens.hpp), or, on a server without tokens, the one
// caller that sees everything (core::caller::anyone()). The tokens file is
// read again on reload() (SIGHUP): calls that started keep the caller they
// had, calls that start after it see the new table; a bad file leaves the
// old table in place.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "auth/tokens.hpp"
#include "core/caller.hpp"

namespace spgemmd::auth {

class authenticator {
 public:
  // Without tokens: every call is core::caller::anyone().
  authenticator() = default;
  // With the tokens file at `tokens_file`, read now (throws as token_table::load).
  explicit authenticator(std::string tokens_file);

  bool needs_tokens() const { return !path_.empty(); }
  // Reads the tokens file again and serves the calls that start after it
  // with it; returns how many tokens it holds. Throws as token_table::load,
  // the table before it staying in place.
  std::size_t reload();

  // The caller of the call `ctx`; UNAUTHENTICATED (saying what to send)
  // where tokens are needed and it sent none, or one the file does not hold.
  grpc::Status authenticate(const grpc::ServerContextBase& ctx, core::caller* who) const;

 private:
  std::string path_;
  std::shared_ptr<const token_table> table_;  // swapped whole (std::atomic_load / atomic_store)
};

}  // namespace spgemmd::auth
