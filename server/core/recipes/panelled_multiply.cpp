#include "core/recipes/panelled_multiply.hpp"

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/panels/host_gather.hpp"
#include "core/panels/panel_cuts.hpp"
#include "core/panels/panel_lane.hpp"
#include "core/panels/panel_queue.hpp"
#include "core/panels/panel_stream.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

// Where an entry lives now (-1: the host).
int device_of(matrix_cache& cache, cache_entry& e) {
  int device = -1;
  std::shared_ptr<spgemm::stored_matrix> stored;
  std::shared_ptr<const host_matrix> host;
  cache.locate(e, &device, &stored, &host);
  return device;
}

// A lane's room on a device of `budget` bytes that holds `held` of the
// product's operands: half of the rest, so that other jobs keep room there.
std::size_t room_on(std::size_t budget, std::size_t held) { return budget > held ? (budget - held) / 2 : 0; }

// B on the job's device beside lane 0's room; A too where it lives there.
spgemm::memory_estimate first_lane(job& j, const spgemm::multiply_options& options,
                                   const std::optional<spgemm::memory_estimate>& whole) {
  matrix_cache& cache = *j.res.cache();
  const int d = j.device;
  const std::size_t b_held = device_of(cache, *j.inputs[1]) == d ? 0 : j.inputs[1]->info.bytes();
  const std::size_t a_held = device_of(cache, *j.inputs[0]) == d ? j.inputs[0]->info.bytes() : 0;
  const std::size_t room = room_on(cache.budget(d), b_held + a_held);
  if (room == 0) {
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "B takes " + std::to_string(j.inputs[1]->info.bytes()) + " bytes: a product in row panels "
                        "needs B on its device beside room for its panels, and the budget of " +
                            cache.backends()[static_cast<std::size_t>(d)]->name() + " is " +
                            std::to_string(cache.budget(d)) + " bytes");
  }
  spgemm::memory_estimate e;
  e.workspace_bytes = b_held + room;
  e.products = whole ? whole->products : 0;
  e.method = "row panels";
  e.algo = whole ? whole->algo : options.algo;
  return e;
}

// The lanes: the job's device first, with its reservation; then every other
// device where there is room now (half of what is left there, or less, down
// to a quarter of lane 0's room), each holding a reservation of its own.
std::vector<std::unique_ptr<panel_lane>> open_lanes(job& j, const in_place& a, const in_place& b,
                                                    const spgemm::matrix_info& a_info,
                                                    const spgemm::matrix_info& b_info,
                                                    std::vector<reservation>* helper_rooms) {
  matrix_cache& cache = *j.res.cache();
  const auto& backends = cache.backends();
  const int d0 = j.device;
  std::vector<std::unique_ptr<panel_lane>> lanes;
  const std::size_t b_held0 = b.device == d0 ? 0 : b_info.bytes();
  if (j.res.bytes() <= b_held0) {
    throw spgemm::error(spgemm::error_kind::does_not_fit, "no room is left beside B on " +
                                                              backends[static_cast<std::size_t>(d0)]->name());
  }
  lanes.push_back(std::make_unique<panel_lane>(d0, backends[static_cast<std::size_t>(d0)], j.res.bytes() - b_held0));
  for (int d = 0; d < static_cast<int>(backends.size()); ++d) {
    if (d == d0) continue;
    const std::size_t held = (b.device == d ? 0 : b_info.bytes()) + (a.device == d ? a_info.bytes() : 0);
    const std::size_t b_held = b.device == d ? 0 : b_info.bytes();
    for (std::size_t room = room_on(cache.budget(d), held); room > 0 && room >= lanes.front()->room_bytes() / 4;
         room /= 2) {
      reservation r(&cache, d);
      if (!r.try_grow(b_held + room)) continue;
      lanes.push_back(std::make_unique<panel_lane>(d, backends[static_cast<std::size_t>(d)], room));
      helper_rooms->push_back(std::move(r));
      break;
    }
  }
  return lanes;
}

// The work of each row of A: on a lane where A lives (with room for 16
// bytes per row), else on the host.
spgemm::row_work work_of_rows(job& j, const in_place& a, const in_place& b, const spgemm::matrix_info& a_info,
                              const std::vector<std::unique_ptr<panel_lane>>& lanes) {
  matrix_cache& cache = *j.res.cache();
  const std::size_t bytes = 2 * sizeof(int64_t) * static_cast<std::size_t>(a_info.rows);
  for (const auto& lane : lanes) {
    if (lane->device() != a.device || bytes > lane->room_bytes()) continue;
    if (!lane->hold(bytes, j.cancel)) throw spgemm::error(spgemm::error_kind::cancelled, "the job was cancelled");
    struct let_go {
      panel_lane& lane;
      std::size_t bytes;
      ~let_go() { lane.let_go(bytes); }
    } held{*lane, bytes};
    return cache.backends()[static_cast<std::size_t>(a.device)]->work_per_row(*a.stored, lane->b());
  }
  auto host_copy = [&](const in_place& m) {
    if (m.host) return m.host;
    return std::make_shared<const host_matrix>(
        cache.backends()[static_cast<std::size_t>(m.device)]->fetch(*m.stored));
  };
  const auto host_a = host_copy(a);
  const auto host_b = host_copy(b)->whole();
  spgemm::row_work work;
  for (const host_matrix::block& block : host_a->blocks()) {
    const spgemm::row_work w =
        std::visit([](const auto& x, const auto& y) { return spgemm::compute_row_work(x, y); }, *block.load(), *host_b);
    work.entries.insert(work.entries.end(), w.entries.begin(), w.entries.end());
    work.products.insert(work.products.end(), w.products.begin(), w.products.end());
  }
  return work;
}

// The mask (input 2) in host memory, where its rows are cut from: its own
// copy there where it lives on a device, held within the host budget.
std::shared_ptr<const host_matrix> mask_on_host(job& j, reservation& room) {
  matrix_cache& cache = *j.res.cache();
  const in_place m = cache.use_in_place(*j.inputs[2]);
  if (m.host) return m.host;
  const std::size_t bytes = j.inputs[2]->info.bytes();
  if (!room.try_grow(bytes)) {
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "a masked product in row panels reads its mask (" + std::to_string(bytes) +
                            " bytes) from host memory, past the host budget (" + std::to_string(cache.host_budget()) +
                            " bytes, --host_budget_bytes)");
  }
  return std::make_shared<const host_matrix>(cache.backends()[static_cast<std::size_t>(m.device)]->fetch(*m.stored));
}

// Each row's entries and whether they bound C's row (C<M>).
panel_mask_rows mask_rows_of(const host_matrix& m, const spgemm::mask_options& how) {
  panel_mask_rows rows;
  rows.value_bytes = spgemm::size_of(m.info().type);
  rows.bounds_c = !how.complement;
  rows.entries.reserve(static_cast<std::size_t>(m.info().rows));
  for (const host_matrix::block& block : m.blocks()) {
    std::visit(
        [&](const auto& x) {
          for (int64_t r = 0; r < x.rows; ++r) rows.entries.push_back(x.row_offsets[r + 1] - x.row_offsets[r]);
        },
        *block.load());
  }
  return rows;
}

std::size_t run_in_panels(job& j, const spgemm::multiply_options& options,
                          const std::optional<spgemm::memory_estimate>& whole,
                          const std::optional<spgemm::mask_options>& how) {
  matrix_cache& cache = *j.res.cache();
  const in_place a = cache.use_in_place(*j.inputs[0]);
  const in_place b = cache.use_in_place(*j.inputs[1]);
  const spgemm::matrix_info a_info = j.inputs[0]->info, b_info = j.inputs[1]->info;
  spgemm::multiply_options panel_options = options;
  if (panel_options.algo == spgemm::algorithm::automatic && whole) panel_options.algo = whole->algo;
  const spgemm::value_type c_type = spgemm::output_type_of(a_info, b_info, panel_options);
  reservation mask_room(&cache, matrix_cache::host);
  const std::shared_ptr<const host_matrix> mask = how ? mask_on_host(j, mask_room) : nullptr;
  const std::optional<panel_mask_rows> mask_rows =
      mask ? std::optional<panel_mask_rows>(mask_rows_of(*mask, *how)) : std::nullopt;

  std::vector<reservation> helper_rooms;
  std::vector<std::unique_ptr<panel_lane>> lanes = open_lanes(j, a, b, a_info, b_info, &helper_rooms);
  for (auto& lane : lanes) lane->place_b(cache, b, b_info);
  const panel_cuts cuts(work_of_rows(j, a, b, a_info, lanes), b_info.cols, spgemm::size_of(a_info.type),
                        spgemm::size_of(c_type), mask_rows ? &*mask_rows : nullptr);
  panel_queue queue(cuts, whole);

  std::mutex mu;
  std::exception_ptr failure;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = e;
    }
    j.cancel.cancel();  // the other lanes stop at their next phase
  };
  // Streamed to the call in row order, or gathered into host memory for a kept result.
  const spgemm::matrix_info shape{a_info.rows, b_info.cols, -1, c_type};
  std::optional<host_gather> gather;
  std::function<void(device_panel)> out;
  if (j.panel_out) {
    j.panel_out->open(shape);
    out = [stream = j.panel_out](device_panel p) { stream->put(std::move(p)); };
  } else {
    gather.emplace(cache, fail);
    out = [&gather](device_panel p) { gather->put(std::move(p)); };
  }
  const panel_product product{cache,         a,          b,     a_info, b_info, panel_options, mask.get(),
                              how.value_or(spgemm::mask_options{}), queue, out, j.cancel};

  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (auto& lane : lanes) {
    threads.emplace_back([&, l = lane.get()] {
      try {
        l->run(product);
      } catch (...) {
        fail(std::current_exception());
      }
    });
  }
  for (auto& t : threads) t.join();
  if (j.panel_out) j.panel_out->close(failure ? outcome_of(failure) : outcome{});
  std::shared_ptr<const host_matrix> kept;
  if (gather) {
    try {
      kept = gather->finish(shape);
    } catch (...) {
      fail(std::current_exception());
    }
  }
  j.times.engine += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (auto& lane : lanes) lane->wait_drained();  // every panel off its device
  helper_rooms.clear();
  if (failure) std::rethrow_exception(failure);

  if (gather) {
    j.host_result = std::move(kept);
    j.host_res = std::move(gather->held());
  }
  int64_t products = 0, nnz = 0;
  std::string where, method;
  for (const auto& lane : lanes) {
    products += lane->products;
    nnz += lane->nnz;
    if (method.empty()) method = lane->method;
    where += (where.empty() ? "" : ", ") + std::to_string(lane->panels) + " on " +
             cache.backends()[static_cast<std::size_t>(lane->device())]->name();
  }
  if (j.panel_out) j.streamed = spgemm::matrix_info{a_info.rows, b_info.cols, nnz, c_type};
  j.step_sized.products = products;
  j.step_sized.method = "row panels (" + where + "): " + method;
  return 0;  // nothing left on a device
}

}  // namespace

job_step panelled_multiply_step(const spgemm::multiply_options& options,
                                const std::optional<spgemm::memory_estimate>& whole,
                                const std::optional<spgemm::mask_options>& how) {
  job_step step;
  step.what = how ? "masked multiply in row panels" : "multiply in row panels";
  step.inputs_in_place = true;
  step.estimate = [=](job& j, spgemm::backend&) { return first_lane(j, options, whole); };
  step.run = [=](job& j, spgemm::backend&) { return run_in_panels(j, options, whole, how); };
  return step;
}

}  // namespace spgemmd::core
