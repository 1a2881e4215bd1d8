#include "core/panels/panel_lane.hpp"

#include <chrono>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

using clock_type = std::chrono::steady_clock;

// Half the room, so that one panel computes while the one before it leaves
// the device; the whole room, one panel at a time, where the workspace every
// panel needs would take more than half of half.
double panel_target(std::size_t capacity, double fixed_bytes) {
  const double half = static_cast<double>(capacity) / 2;
  return fixed_bytes > half / 2 ? static_cast<double>(capacity) : half;
}

}  // namespace

panel_lane::panel_lane(int device, std::shared_ptr<spgemm::backend> backend, std::size_t room_bytes)
    : device_(device), room_(std::make_shared<room>(room_bytes)), backend_(std::move(backend)) {}

void panel_lane::place_b(matrix_cache& cache, const in_place& b, const spgemm::matrix_info& b_info) {
  if (b.device == device_) {
    b_ = b.stored;
  } else if (b.device >= 0) {
    b_ = backend_->copy(*b.stored);
    cache.note_transfer(device_, transfer::from_peer, b_info.bytes());
  } else {
    b_ = backend_->store(*b.host->whole());
    cache.note_transfer(device_, transfer::to_device, b_info.bytes());
  }
}

std::shared_ptr<spgemm::stored_matrix> panel_lane::rows_of_a(const panel_product& p, int64_t begin, int64_t end) {
  if (p.a.device >= 0) {
    auto rows = backend_->copy_rows(*p.a.stored, begin, end);
    if (p.a.device != device_) p.cache.note_transfer(device_, transfer::from_peer, rows->info().bytes());
    return rows;
  }
  return rows_from_host(p, *p.a.host, begin, end);
}

std::shared_ptr<spgemm::stored_matrix> panel_lane::rows_from_host(const panel_product& p, const host_matrix& m,
                                                                  int64_t begin, int64_t end) {
  auto rows = backend_->store(m.rows(begin, end));
  p.cache.note_transfer(device_, transfer::to_device, rows->info().bytes());
  return rows;
}

spgemm::memory_estimate panel_lane::estimate(const panel_product& p, const spgemm::stored_matrix& a,
                                             const spgemm::stored_matrix* m) {
  if (m == nullptr) return backend_->estimate_multiply(a, *b_, p.options);
  return backend_->estimate_masked_multiply(a, *b_, *m, p.how, p.options);
}

std::shared_ptr<spgemm::stored_matrix> panel_lane::multiply(const panel_product& p, const spgemm::stored_matrix& a,
                                                            const spgemm::stored_matrix* m, std::size_t estimate) {
  if (m == nullptr) return backend_->multiply(a, *b_, p.options, estimate, p.stop);
  return backend_->masked_multiply(a, *b_, *m, p.how, p.options, estimate, p.stop);
}

void panel_lane::run(const panel_product& p) {
  const panel_cuts& cuts = p.queue.cuts();
  const std::size_t capacity = room_->capacity();
  auto stopped = [&] { return spgemm::error(spgemm::error_kind::cancelled, "the job was cancelled"); };
  auto too_large = [&](int64_t row, std::size_t bytes, const std::string& what) {
    return spgemm::error(spgemm::error_kind::does_not_fit,
                         "row " + std::to_string(row) + " of A alone needs " + std::to_string(bytes) + " bytes (" +
                             what + ") on " + backend_->name() + ", which has " + std::to_string(capacity) +
                             " bytes of room for row panels");
  };
  while (auto taken = p.queue.take(panel_target(capacity, p.queue.fixed_bytes()))) {
    int64_t begin = taken->first;
    const int64_t last = taken->second;
    while (begin < last) {
      // Rows [begin, end) that fit the panel target by their estimate (the
      // whole room for a single row that needs it).
      int64_t end = last;
      std::size_t a_bytes = 0;  // A's rows and M's
      std::shared_ptr<spgemm::stored_matrix> a, m;
      spgemm::memory_estimate e;
      while (true) {
        a_bytes = cuts.operand_bytes(begin, end);
        if (a_bytes > capacity) {
          if (end == begin + 1) throw too_large(begin, a_bytes, p.mask ? "its rows of A and M" : "its row of A");
          end = begin + (end - begin) / 2;
          continue;
        }
        if (!room_->take(a_bytes, p.stop)) throw stopped();
        a = rows_of_a(p, begin, end);
        if (p.mask != nullptr) m = rows_from_host(p, *p.mask, begin, end);
        e = estimate(p, *a, m.get());
        p.queue.learn(begin, end, e);
        const double target = panel_target(capacity, p.queue.fixed_bytes());
        const std::size_t need = a_bytes + e.total();
        if (static_cast<double>(need) <= target || (end == begin + 1 && need <= capacity)) break;
        a.reset();
        m.reset();
        room_->give_back(a_bytes);
        if (end == begin + 1) throw too_large(begin, need, "its row of A and its product's estimate, " + e.method);
        const int64_t shorter = p.queue.cut(begin, end, target);
        end = shorter < end ? shorter : begin + (end - begin) / 2;
      }
      if (!room_->take(e.total(), p.stop)) {
        room_->give_back(a_bytes);
        throw stopped();
      }
      p.cache.note_panel(device_, +1);
      std::shared_ptr<spgemm::stored_matrix> c;
      try {
        const auto started = clock_type::now();
        c = multiply(p, *a, m.get(), e.total());
        engine_seconds += std::chrono::duration<double>(clock_type::now() - started).count();
      } catch (...) {
        a.reset();
        m.reset();
        room_->give_back(a_bytes + e.total());
        p.cache.note_panel(device_, -1);
        throw;
      }
      a.reset();
      m.reset();
      const std::size_t c_bytes = c->info().bytes();
      room_->give_back(a_bytes + e.total() - c_bytes);
      ++panels;
      products += e.products;
      nnz += c->info().nnz;
      method = e.method;
      // Its bytes go back once the consumer has taken it off the device.
      p.cache.note_transfer(device_, transfer::to_host, c_bytes);
      p.out(device_panel(begin, device_, backend_, std::move(c),
                             [r = room_, cache = &p.cache, device = device_, c_bytes] {
                               r->give_back(c_bytes);
                               cache->note_panel(device, -1);
                             }));
      begin = end;
    }
  }
}

}  // namespace spgemmd::core
