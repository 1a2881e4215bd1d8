// A result kept in host memory, gathered from its row panels as they leave
// their devices, in any order: each panel's rows fetched as pieces_ blocks by
// as many drain threads per device at once (copies on streams of their own
// through pinned staging, fresh pages written on several cores: one copy is
// bound by a core's page faults and memory bandwidth, not the link's; the
// host's cores shared among the devices), the panel freed on its device once
// they are all on the host, the blocks kept as they are (host_matrix: nothing
// copies them together). Counted against the host budget as it grows; a
// panel past it goes to the spill file where the server has one (each piece
// in memory only while it is written).
// Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/host_matrix.hpp"
#include "core/matrix_cache.hpp"
#include "core/panels/panel_stream.hpp"

namespace spgemmd::core {

class host_gather {
 public:
  // `failed` is called once, with why, when a panel could not be kept (the
  // host budget passed, a copy failed): the job stops.
  host_gather(matrix_cache& cache, std::function<void(std::exception_ptr)> failed);
  ~host_gather();  // waits for the panels in flight
  host_gather(const host_gather&) = delete;
  host_gather& operator=(const host_gather&) = delete;

  // Takes a panel off its device, in the background.
  void put(device_panel p);
  // Once every panel was put: waits for them, and returns the matrix of
  // `shape` (its bytes held in held()); throws what failed.
  std::shared_ptr<const host_matrix> finish(const spgemm::matrix_info& shape);
  reservation& held() { return held_; }  // in the host budget (matrix_cache::host)

 private:
  // Rows [begin, end) of a panel to fetch; the panel goes with the last piece.
  struct piece {
    std::shared_ptr<device_panel> panel;
    int64_t begin = 0, end = 0;
    bool to_disk = false;
  };
  // The spill file, for a panel past the host budget; false where the server has none.
  bool room_on_disk();
  std::shared_ptr<const spilled_rows> write_to_disk(const spgemm::any_csr& rows);
  void drain();
  void stop();
  void fail(std::exception_ptr e);

  matrix_cache& cache_;
  // Blocks per panel, and drain threads per device the panels come from: the
  // host's hardware threads shared by its devices (4 to 32).
  const int pieces_;
  std::function<void(std::exception_ptr)> failed_;
  reservation held_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<piece> todo_;
  std::vector<std::thread> drains_;
  std::vector<int> devices_;  // those the panels came from (a set of drains each)
  bool closing_ = false;
  std::shared_ptr<spill_file> file_;  // opened with the first panel to spill
  std::vector<host_matrix::block> blocks_;
  std::exception_ptr failure_;
};

}  // namespace spgemmd::core
