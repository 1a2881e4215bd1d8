// The tokens file: which tenant each bearer token names, whether that tenant
// is an admin, and its quotas. One token per line (docs/configuration.md):
//
//   # TOKEN                             TENANT  OPTIONS
//   4f1c0c2e9a7b3d5e8f60a1b2c3d4e5f6    alice   device_bytes=8GiB host_bytes=32GiB running_jobs=4 queued_jobs=64
//   sha256:9f86d081884c7d659a2feaa0...  ops     admin
//
// A token is at least 16 printable characters without spaces, or `sha256:`
// and the 64 hex digits of its SHA-256 (the file then holds no token itself).
// Tokens are kept, and looked up, by their SHA-256: the lookup's time says
// nothing of how much of a guess was right.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "core/caller.hpp"

namespace spgemmd::auth {

class token_table {
 public:
  // Reads the tokens file at `path`. Throws std::runtime_error
  // ("PATH:LINE: why") on a line it can not read, a token given twice, a
  // tenant given different options on two lines, or a file without tokens.
  static token_table load(const std::string& path);
  // Reads a tokens file's text; `where` names it in errors.
  static token_table parse(std::string_view text, const std::string& where);

  // The caller `token` names; nullptr where it names none.
  const core::caller* find(std::string_view token) const;
  std::size_t size() const { return callers_.size(); }

 private:
  using digest = std::array<unsigned char, 32>;
  static digest sha256(std::string_view bytes);
  std::map<digest, core::caller> callers_;
};

}  // namespace spgemmd::auth
