// One device's share of a product computed in row panels: B there (the
// cache's copy where B lives there, else a copy of its own, peer-to-peer
// from another device or from the host), then panel after panel taken from
// the product's queue until none is left: A's rows copied to the device
// (and the mask's, for a masked product),
// estimated, cut smaller while they take more than half the lane's room (so
// that one panel computes while the one before it leaves the device; the
// whole room where the workspace every panel needs would crowd half of it),
// multiplied within that estimate, handed to the product's consumer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/matrix_cache.hpp"
#include "core/panels/panel_queue.hpp"
#include "core/panels/panel_stream.hpp"
#include "core/panels/room.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

// What every lane of one product reads.
struct panel_product {
  matrix_cache& cache;
  const in_place& a;  // A and B where they live
  const in_place& b;
  spgemm::matrix_info a_info, b_info;
  spgemm::multiply_options options;  // one method for every panel
  const host_matrix* mask;  // C<M> or C<!M> per `how`: M in host memory; none unmasked
  spgemm::mask_options how;
  panel_queue& queue;
  std::function<void(device_panel)> out;  // to the call's stream, or to the host gather
  const spgemm::cancel_token& stop;  // the job's cancellation, or another lane's failure
};

class panel_lane {
 public:
  // A lane on `device` of `backend` with `room_bytes` there for its panels
  // (its reservation, held by the caller, less B's bytes).
  panel_lane(int device, std::shared_ptr<spgemm::backend> backend, std::size_t room_bytes);

  int device() const { return device_; }
  std::size_t room_bytes() const { return room_->capacity(); }
  // B on the device (a copy unless it lives there). Before run() and planning.
  void place_b(matrix_cache& cache, const in_place& b, const spgemm::matrix_info& b_info);
  const spgemm::stored_matrix& b() const { return *b_; }
  // Holds `bytes` of the room (work the product does on the device before
  // its panels: measuring A's rows); false where `stop` came first.
  bool hold(std::size_t bytes, const spgemm::cancel_token& stop) { return room_->take(bytes, stop); }
  void let_go(std::size_t bytes) { room_->give_back(bytes); }
  // Panels until the queue is empty; throws what failed.
  void run(const panel_product& p);
  // Once the consumer has let go of every panel of this lane.
  void wait_drained() { room_->wait_empty(); }

  int64_t panels = 0;
  int64_t products = 0;
  int64_t nnz = 0;  // of its panels of C
  double engine_seconds = 0;
  std::string method;  // of its last panel

 private:
  std::shared_ptr<spgemm::stored_matrix> rows_of_a(const panel_product& p, int64_t begin, int64_t end);
  // Rows [begin, end) of `m` copied to the device.
  std::shared_ptr<spgemm::stored_matrix> rows_from_host(const panel_product& p, const host_matrix& m, int64_t begin,
                                                        int64_t end);
  // The rows' product, masked where the product is (`m`: M's rows), or its estimate.
  spgemm::memory_estimate estimate(const panel_product& p, const spgemm::stored_matrix& a,
                                   const spgemm::stored_matrix* m);
  std::shared_ptr<spgemm::stored_matrix> multiply(const panel_product& p, const spgemm::stored_matrix& a,
                                                  const spgemm::stored_matrix* m, std::size_t estimate);

  int device_;
  std::shared_ptr<room> room_;
  std::shared_ptr<spgemm::backend> backend_;
  std::shared_ptr<spgemm::stored_matrix> b_;
};

}  // namespace spgemmd::core
