#include "core/recipes/graph.hpp"

#include <variant>

#include "core/matrices.hpp"
#include "core/recipes/panelled_multiply.hpp"
#include "core/recipes/steps.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::core {
namespace {

// The operands as a job takes them: pinned as its inputs, each transposed
// one by a transpose step first; what the steps after read of each.
struct taken {
  std::vector<pin> inputs;
  std::vector<job_step> steps;
  std::vector<operand> operands;
  std::vector<spgemm::matrix_info> infos;  // as taken
};

taken take(std::vector<graph_operand> operands) {
  taken t;
  int transposes = 0;
  for (graph_operand& o : operands) {
    const int index = static_cast<int>(t.inputs.size());
    spgemm::matrix_info info = o.matrix->info;
    if (o.transposed) {
      std::swap(info.rows, info.cols);
      t.steps.push_back(transpose_step(index));
      t.operands.push_back(intermediate(transposes++));
    } else {
      t.operands.push_back(input(index));
    }
    t.infos.push_back(info);
    t.inputs.push_back(std::move(o.matrix));
  }
  return t;
}

// The kind of a step's job, in logs and metrics: the op's family.
const char* kind_of(const spgemm::matrix_op& op) {
  return std::visit(
      [](const auto& o) -> const char* {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, spgemm::ewise_add>) return "ewise_add";
        if constexpr (std::is_same_v<O, spgemm::ewise_mult>) return "ewise_mult";
        if constexpr (std::is_same_v<O, spgemm::apply_unary> || std::is_same_v<O, spgemm::apply_scalar>) return "apply";
        if constexpr (std::is_same_v<O, spgemm::select_entries>) return "select";
        if constexpr (std::is_same_v<O, spgemm::top_k>) return "top_k";
        if constexpr (std::is_same_v<O, spgemm::reduce>) return "reduce";
        if constexpr (std::is_same_v<O, spgemm::scale>) return "scale";
        return "extract_rows";
      },
      op);
}

}  // namespace

outcome mxm_job(estimate_memo& memo, graph_operand a, graph_operand b, std::optional<graph_operand> mask,
                const spgemm::mask_options& how, const spgemm::multiply_options& options, int priority,
                std::shared_ptr<job>* out) {
  std::vector<graph_operand> operands;
  operands.push_back(std::move(a));
  operands.push_back(std::move(b));
  if (mask) operands.push_back(std::move(*mask));
  taken t = take(std::move(operands));
  const spgemm::matrix_info &ia = t.infos[0], &ib = t.infos[1];
  if (ia.cols != ib.rows) {
    return {status::invalid_argument, "cannot multiply A (" + shape(ia) + ") by B (" + shape(ib) +
                                          "), as taken: A's columns must equal B's rows"};
  }
  if (mask && (t.infos[2].rows != ia.rows || t.infos[2].cols != ib.cols)) {
    return {status::invalid_argument, "the mask (" + shape(t.infos[2]) + ", as taken) must have C's shape, " +
                                          std::to_string(ia.rows) + " x " + std::to_string(ib.cols)};
  }
  try {
    spgemm::check_semiring(options.semiring);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  const bool as_given = t.steps.empty();  // no operand transposed first: the product reads the inputs
  if (mask) {
    t.steps.push_back(masked_multiply_step(t.operands[0], t.operands[1], t.operands[2], how, options));
  } else {
    t.steps.push_back(multiply_step(memo, t.operands[0], t.operands[1], options));
  }
  if (as_given) {  // too large for a device in one piece: in row panels, as multiply_job
    const std::optional<spgemm::mask_options> masked = mask ? std::optional<spgemm::mask_options>(how) : std::nullopt;
    t.steps.back().in_panels = [options, masked](const std::optional<spgemm::memory_estimate>& whole) {
      return panelled_multiply_step(options, whole, masked);
    };
  }
  *out = make_job("mxm", std::string(spgemm::to_string(options.algo)), priority, std::move(t.inputs),
                  std::move(t.steps));
  return {};
}

outcome op_job(const spgemm::matrix_op& op, std::vector<graph_operand> operands, int priority,
               std::shared_ptr<job>* out) {
  taken t = take(std::move(operands));
  try {
    (void)spgemm::result_bound(op, t.infos);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  t.steps.push_back(op_step(op, t.operands));
  *out = make_job(kind_of(op), spgemm::describe(op), priority, std::move(t.inputs), std::move(t.steps));
  return {};
}

}  // namespace spgemmd::core
