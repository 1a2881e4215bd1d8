#include "core/recipes/steps.hpp"

#include <chrono>

namespace spgemmd::core {

structure_hold::structure_hold(matrix_cache& cache, const std::weak_ptr<spgemm::stored_matrix>& m, int device)
    : cache_(cache) {
  pin_ = cache_.find_stored(m, device);
  if (!pin_) return;
  std::shared_ptr<spgemm::stored_matrix> resident = cache_.make_resident(*pin_, device);
  if (resident && !resident.owner_before(m) && !m.owner_before(resident)) {
    stored_ = std::move(resident);
  } else if (resident) {
    cache_.release_resident(*pin_);  // its values were replaced meanwhile: a product of its own
  }
}

structure_hold::~structure_hold() {
  if (stored_) cache_.release_resident(*pin_);
}

const spgemm::stored_matrix& stored(job& j, operand o) {
  const auto i = static_cast<std::size_t>(o.index);
  return o.intermediate ? *j.temps[i] : *j.resident[i];
}

void note_engine(job& j, steady::time_point started) {
  j.times.engine += std::chrono::duration<double>(steady::now() - started).count();
}

std::shared_ptr<spgemm::stored_matrix> product_of(job& j, spgemm::backend& b, const spgemm::stored_matrix& x,
                                                  const spgemm::stored_matrix& y, const spgemm::multiply_options& options,
                                                  const std::weak_ptr<spgemm::stored_matrix>& last) {
  const steady::time_point started = steady::now();
  std::shared_ptr<spgemm::stored_matrix> c;
  // The structure is read only while its entry is held resident and in use:
  // counted, it neither spills nor is freed under the product. The numeric
  // passes alone run plus-times; another semiring's product runs whole.
  const structure_hold hold(*j.res.cache(), last, j.device);
  if (hold && options.semiring.is_plus_times() &&
      b.estimate_multiply_numeric(x, y, *hold.get(), options).total() <= j.step_estimate) {
    c = b.multiply_numeric(x, y, *hold.get(), options, j.step_estimate, j.cancel);
  } else {
    c = b.multiply(x, y, options, j.step_estimate, j.cancel);
  }
  note_engine(j, started);
  return c;
}

std::size_t intermediate_bytes(const job& j) {
  std::size_t held = 0;
  for (const auto& t : j.temps) held += t->info().bytes();
  return held;
}

namespace {

// Keeps a step's product as the job's next intermediate; returns the bytes
// the job holds then.
std::size_t keep_intermediate(job& j, std::shared_ptr<spgemm::stored_matrix> m) {
  const std::size_t held = intermediate_bytes(j) + m->info().bytes();
  j.temps.push_back(std::move(m));
  return held;
}

}  // namespace

job_step multiply_step(estimate_memo& memo, operand left, operand right, const spgemm::multiply_options& options) {
  const bool memoized = !left.intermediate && !right.intermediate;
  auto key = [=](const job& j) {
    const cache_entry& a = *j.inputs[static_cast<std::size_t>(left.index)];
    return estimate_memo::key(a.tenant, a.handle, j.inputs[static_cast<std::size_t>(right.index)]->handle, j.device,
                              options);
  };
  job_step step;
  step.what = "multiply";
  step.estimate = [=, &memo](job& j, spgemm::backend& b) {
    auto estimate = [&] { return b.estimate_multiply(stored(j, left), stored(j, right), options); };
    if (!memoized) return estimate();
    const std::string k = key(j);
    if (auto known = memo.find(k)) return known->estimate;
    spgemm::memory_estimate e = estimate();
    memo.put(k, e,
             {j.inputs[static_cast<std::size_t>(left.index)].watch(),
              j.inputs[static_cast<std::size_t>(right.index)].watch()});
    return e;
  };
  step.run = [=, &memo](job& j, spgemm::backend& b) {
    std::weak_ptr<spgemm::stored_matrix> last;
    if (memoized) {
      if (auto known = memo.find(key(j))) last = known->structure;
    }
    auto c = product_of(j, b, stored(j, left), stored(j, right), options, last);
    if (memoized) memo.note_result(key(j), c);
    return keep_intermediate(j, std::move(c));
  };
  if (memoized) {
    step.gave_before = [=, &memo](const job& j) -> std::optional<spgemm::matrix_info> {
      const auto known = memo.find(key(j));
      return known ? known->result : std::nullopt;
    };
  }
  return step;
}

job_step transpose_step(int index) {
  job_step step;
  step.what = "transpose";
  step.estimate = [=](job& j, spgemm::backend& b) { return b.estimate_transpose(stored(j, input(index))); };
  step.run = [=](job& j, spgemm::backend& b) {
    const steady::time_point started = steady::now();
    auto t = b.transpose(stored(j, input(index)), j.cancel);
    note_engine(j, started);
    return keep_intermediate(j, std::move(t));
  };
  return step;
}

job_step masked_multiply_step(operand left, operand right, operand mask, const spgemm::mask_options& how,
                              const spgemm::multiply_options& options) {
  job_step step;
  step.what = "masked multiply";
  step.estimate = [=](job& j, spgemm::backend& b) {
    return b.estimate_masked_multiply(stored(j, left), stored(j, right), stored(j, mask), how, options);
  };
  step.run = [=](job& j, spgemm::backend& b) {
    const steady::time_point started = steady::now();
    auto c = b.masked_multiply(stored(j, left), stored(j, right), stored(j, mask), how, options, j.step_estimate,
                               j.cancel);
    note_engine(j, started);
    return keep_intermediate(j, std::move(c));
  };
  return step;
}

job_step op_step(const spgemm::matrix_op& op, std::vector<operand> operands) {
  auto matrices = [operands](job& j) {
    std::vector<const spgemm::stored_matrix*> out;
    for (const operand& o : operands) out.push_back(&stored(j, o));
    return out;
  };
  job_step step;
  step.what = spgemm::describe(op);
  step.estimate = [=](job& j, spgemm::backend& b) { return b.estimate_op(op, matrices(j)); };
  step.run = [=](job& j, spgemm::backend& b) {
    const steady::time_point started = steady::now();
    auto c = b.run_op(op, matrices(j), j.step_estimate, j.cancel);
    note_engine(j, started);
    return keep_intermediate(j, std::move(c));
  };
  return step;
}

std::shared_ptr<job> make_job(const char* kind, std::string algorithm, int priority, std::vector<pin> inputs,
                              std::vector<job_step> steps) {
  auto j = std::make_shared<job>();
  j->kind = kind;
  j->algorithm = std::move(algorithm);
  j->priority = priority;
  j->inputs = std::move(inputs);
  j->steps = std::move(steps);
  // The last step's product becomes the result; the intermediates before it go.
  if (!j->steps.empty()) {
    auto run = j->steps.back().run;
    j->steps.back().run = [run](job& jj, spgemm::backend& b) {
      run(jj, b);
      jj.result = jj.temps.back();
      jj.temps.clear();
      return jj.result->info().bytes();
    };
  }
  return j;
}

}  // namespace spgemmd::core
