// The row panels of a product, from the lanes that compute them (in any
// order) to the one consumer that takes them in row order: the call that
// streams the result to its client, or the job itself gathering a kept
// result in host memory. A panel stays on its device until its consumer is
// done with it; then it is freed and its bytes go back to its lane's room.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/outcome.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

// Rows of C from `first_row` on, stored on the device that computed them.
// Move-only; gone (freed, `on_release` called) when the last owner drops it.
class device_panel {
 public:
  device_panel(int64_t first, int on_device, std::shared_ptr<spgemm::backend> on_backend,
               std::shared_ptr<spgemm::stored_matrix> stored, std::function<void()> on_release)
      : first_row(first), device(on_device), backend(std::move(on_backend)), rows(std::move(stored)),
        on_release_(std::move(on_release)) {}
  device_panel(device_panel&& o) noexcept { *this = std::move(o); }
  device_panel& operator=(device_panel&& o) noexcept;
  device_panel(const device_panel&) = delete;
  device_panel& operator=(const device_panel&) = delete;
  ~device_panel() { release(); }
  void release();

  int64_t first_row = 0;
  int device = -1;
  std::shared_ptr<spgemm::backend> backend;
  std::shared_ptr<spgemm::stored_matrix> rows;

 private:
  std::function<void()> on_release_;
};

class panel_stream {
 public:
  // The producer's side.
  // C's shape (its nnz unknown until the last panel): the consumer may start.
  void open(const spgemm::matrix_info& shape);
  void put(device_panel p);
  // After the last put (ok), or on failure: panels not taken yet are freed.
  void close(const outcome& result);

  // The consumer's side.
  // Calls `f` once the stream is open (at once where it is).
  void when_open(std::function<void(const spgemm::matrix_info&)> f);
  enum class state { panel, waiting, finished, failed };
  // The next panel in row order into `out` where it was computed (panel);
  // else `wake` is kept and called once, from the producer, when there is
  // news (waiting); finished once every row was taken; failed (why in
  // `failure`) where the job failed.
  state poll(std::optional<device_panel>* out, std::function<void()> wake, outcome* failure);
  // The same, waiting for the news instead.
  state next(std::optional<device_panel>* out, outcome* failure);
  // The consumer is gone: panels put now or later are freed at once.
  void abandon();

 private:
  // The news for the consumer, lock held; `waiting` where there is none.
  state look(std::optional<device_panel>* out, outcome* failure);
  // Takes what the producer's change calls, lock held, to call without it.
  std::function<void()> take_wake();

  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<spgemm::matrix_info> shape_;
  std::function<void(const spgemm::matrix_info&)> on_open_;
  std::map<int64_t, device_panel> ready_;  // by first row
  int64_t next_row_ = 0;
  bool closed_ = false, abandoned_ = false;
  outcome result_;
  std::function<void()> wake_;
};

}  // namespace spgemmd::core
