// Galerkin products on a backend (spgemm/galerkin.hpp): its transpose, then
// two products in the order the estimates favour, each within its estimate.
#include "spgemm/galerkin.hpp"

#include <algorithm>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

std::string shape(const matrix_info& m) { return std::to_string(m.rows) + " x " + std::to_string(m.cols); }

void check_shapes(const matrix_info& p, const matrix_info& a, galerkin_form form) {
  const bool ptap = form == galerkin_form::pt_a_p;
  const std::int64_t fine = ptap ? p.rows : p.cols;
  if (a.rows != a.cols || a.rows != fine) {
    throw_bad_input(std::string(ptap ? "P^T A P" : "P A P^T") + " needs a square A with as many rows as P has " +
                    (ptap ? "rows" : "columns") + "; got A (" + shape(a) + ") and P (" + shape(p) + ")");
  }
}

// R and Q of R A Q.
struct sides {
  const stored_matrix& r;
  const stored_matrix& q;
};
sides sides_of(galerkin_form form, const stored_matrix& p, const stored_matrix& pt) {
  return form == galerkin_form::pt_a_p ? sides{pt, p} : sides{p, pt};
}

std::string joined(const std::string& a, const std::string& b) { return a.empty() ? b : a + " + " + b; }

}  // namespace

std::string_view to_string(galerkin_order order) {
  return order == galerkin_order::right_first ? "R(AQ)" : "(RA)Q";
}

galerkin_plan plan_galerkin(const matrix_info& r, const matrix_info& q, const memory_estimate& a_q,
                            const memory_estimate& r_a) {
  galerkin_plan plan;
  const double rows_aq = static_cast<double>(std::max<std::int64_t>(q.rows, 1));  // A Q has A's rows: Q's
  const double rows_q = static_cast<double>(std::max<std::int64_t>(q.rows, 1));
  plan.right_first_work = static_cast<double>(a_q.products) +
                          static_cast<double>(r.nnz) * static_cast<double>(a_q.nnz_bound) / rows_aq;
  plan.left_first_work = static_cast<double>(r_a.products) +
                         static_cast<double>(r_a.nnz_bound) * static_cast<double>(q.nnz) / rows_q;
  plan.order = plan.left_first_work < plan.right_first_work ? galerkin_order::left_first : galerkin_order::right_first;
  return plan;
}

galerkin_result galerkin(backend& on, const stored_matrix& p, const stored_matrix& a, galerkin_form form,
                         const multiply_options& options, const cancel_token& cancel) {
  check_shapes(p.info(), a.info(), form);
  galerkin_result out;
  std::size_t peak = 0;
  out.transpose = on.transpose(p, cancel, &peak);
  out.methods = "transpose";
  const sides s = sides_of(form, p, *out.transpose);
  const memory_estimate a_q = on.estimate_multiply(a, s.q, options);
  const memory_estimate r_a = on.estimate_multiply(s.r, a, options);
  out.order = plan_galerkin(s.r.info(), s.q.info(), a_q, r_a).order;
  const bool right = out.order == galerkin_order::right_first;
  const memory_estimate& first = right ? a_q : r_a;
  const std::size_t held = out.transpose->info().bytes();
  std::size_t step_peak = 0;
  out.intermediate = right ? on.multiply(a, s.q, options, first.total(), cancel, &step_peak)
                           : on.multiply(s.r, a, options, first.total(), cancel, &step_peak);
  out.peak_bytes = std::max(peak, held + step_peak);
  out.methods = joined(out.methods, first.method);
  out.products = first.products;
  const stored_matrix& x = right ? s.r : *out.intermediate;
  const stored_matrix& y = right ? *out.intermediate : s.q;
  const memory_estimate second = on.estimate_multiply(x, y, options);
  out.c = on.multiply(x, y, options, second.total(), cancel, &step_peak);
  out.peak_bytes = std::max(out.peak_bytes, held + out.intermediate->info().bytes() + step_peak);
  out.methods = joined(out.methods, second.method);
  out.products += second.products;
  return out;
}

galerkin_result galerkin_numeric(backend& on, const stored_matrix& p, const stored_matrix& a, galerkin_form form,
                                 const galerkin_result& previous, const multiply_options& options,
                                 const cancel_token& cancel) {
  check_shapes(p.info(), a.info(), form);
  galerkin_result out;
  out.order = previous.order;
  std::size_t peak = 0;
  out.transpose = on.transpose(p, cancel, &peak);
  out.methods = "transpose";
  const sides s = sides_of(form, p, *out.transpose);
  const bool right = out.order == galerkin_order::right_first;
  const stored_matrix& u = right ? a : s.r;
  const stored_matrix& v = right ? s.q : a;
  const memory_estimate first = on.estimate_multiply_numeric(u, v, *previous.intermediate, options);
  const std::size_t held = out.transpose->info().bytes();
  std::size_t step_peak = 0;
  out.intermediate = on.multiply_numeric(u, v, *previous.intermediate, options, first.total(), cancel, &step_peak);
  out.peak_bytes = std::max(peak, held + step_peak);
  out.methods = joined(out.methods, first.method);
  out.products = first.products;
  const stored_matrix& x = right ? s.r : *out.intermediate;
  const stored_matrix& y = right ? *out.intermediate : s.q;
  const memory_estimate second = on.estimate_multiply_numeric(x, y, *previous.c, options);
  out.c = on.multiply_numeric(x, y, *previous.c, options, second.total(), cancel, &step_peak);
  out.peak_bytes = std::max(out.peak_bytes, held + out.intermediate->info().bytes() + step_peak);
  out.methods = joined(out.methods, second.method);
  out.products += second.products;
  return out;
}

}  // namespace spgemm
