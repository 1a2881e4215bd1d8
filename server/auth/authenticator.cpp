#include "auth/authenticator.hpp"

#include <atomic>
#include <cctype>
#include <string_view>
#include <utility>

namespace spgemmd::auth {

namespace {

// The token of an "authorization" value "Bearer <token>" (the scheme in any
// case, RFC 6750); empty where it is not one.
std::string_view bearer_token(std::string_view value) {
  constexpr std::string_view scheme = "bearer ";
  if (value.size() <= scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != scheme[i]) return {};
  }
  value.remove_prefix(scheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
}

grpc::Status unauthenticated(const char* why) {
  return {grpc::StatusCode::UNAUTHENTICATED,
          std::string(why) + ": this server takes calls with \"authorization: Bearer <token>\" metadata only "
                             "(spgemm --token or SPGEMM_TOKEN; spgemm.Client(token=...))"};
}

}  // namespace

authenticator::authenticator(std::string tokens_file)
    : path_(std::move(tokens_file)),
      table_(std::make_shared<const token_table>(token_table::load(path_))) {}

std::size_t authenticator::reload() {
  auto fresh = std::make_shared<const token_table>(token_table::load(path_));
  const std::size_t n = fresh->size();
  std::atomic_store(&table_, std::shared_ptr<const token_table>(std::move(fresh)));
  return n;
}

grpc::Status authenticator::authenticate(const grpc::ServerContextBase& ctx, core::caller* who) const {
  if (!needs_tokens()) {
    *who = core::caller::anyone();
    return grpc::Status::OK;
  }
  const auto& metadata = ctx.client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return unauthenticated("no bearer token");
  const std::string_view token = bearer_token(std::string_view(it->second.data(), it->second.size()));
  if (token.empty()) return unauthenticated("the authorization metadata is not \"Bearer <token>\"");
  const std::shared_ptr<const token_table> table = std::atomic_load(&table_);
  const core::caller* found = table->find(token);
  if (found == nullptr) return unauthenticated("the bearer token is not valid");
  *who = *found;
  return grpc::Status::OK;
}

}  // namespace spgemmd::auth
