// The recipes of algebraic multigrid on the server: a hierarchy's setup, its
// re-setup with new values of A_0 (numeric only), and a solve with it (or
// one V-cycle, as a preconditioner). A setup or re-setup is a job whose
// steps are the engine's setup steps (spgemm/amg.hpp: amg::builder), each
// sized and admitted on its own as a product's steps are; at its end the
// hierarchy's matrices become cache entries and it is kept
// (core/amg_hierarchies.hpp). A solve is one step sized by its vectors.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/amg_hierarchies.hpp"
#include "core/job.hpp"
#include "core/outcome.hpp"
#include "spgemm/amg.hpp"

namespace spgemmd::core {

// Called once when the job ends, from a scheduler thread: ok and the record
// (kept and listed), or why not.
using amg_done = std::function<void(outcome, std::shared_ptr<amg_record>)>;

struct amg_setup_request {
  caller who;  // whose the hierarchy and its matrices are
  std::string name;
  pin a;  // A_0
  // Optional: the near null space, an n x m matrix with every entry of its
  // rows stored (n = rows of A_0).
  pin near_nullspace;
  spgemm::amg::setup_options options;  // near_nullspace filled from the pin
  int priority = 0;
};

// invalid_argument where A_0 is not square or the near null space has
// another number of rows, or is not dense.
outcome amg_setup_job(amg_hierarchies& hierarchies, amg_setup_request request, amg_done done,
                      std::shared_ptr<job>* out);

// The record's hierarchy again with the present values of A_0 (its pattern
// never changes): invalid_argument where a re-setup of it runs already.
outcome amg_resetup_job(amg_hierarchies& hierarchies, std::shared_ptr<amg_record> record, int priority,
                        amg_done done, std::shared_ptr<job>* out);

struct amg_solve_request {
  std::vector<double> b;
  std::vector<double> x;  // the first guess (empty: zeros)
  spgemm::amg::solve_options options;
  bool one_cycle = false;  // x = M^-1 b, one V-cycle from zero
  int priority = 0;
};
using amg_solved = std::function<void(outcome, spgemm::amg::solve_report, std::vector<double> x)>;

// invalid_argument where b's size is not A_0's rows; not_found where the
// hierarchy's matrices were deleted.
outcome amg_solve_job(amg_hierarchies& hierarchies, std::shared_ptr<amg_record> record, amg_solve_request request,
                      amg_solved done, std::shared_ptr<job>* out);

}  // namespace spgemmd::core
