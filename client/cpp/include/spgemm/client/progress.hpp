// Progress of one transfer or file write, as the client reports it.
#pragma once

#include <cstdint>
#include <functional>

namespace spgemm::client {

// Bytes and rows moved so far by one transfer (upload, download or a
// streamed result) or written to a file; total_rows is known from the header
// (0 before it).
struct progress {
  std::int64_t bytes = 0;
  std::int64_t rows = 0;
  std::int64_t total_rows = 0;
  bool done = false;
};
using progress_callback = std::function<void(const progress&)>;

}  // namespace spgemm::client
