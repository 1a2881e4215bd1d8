// The graph recipes (core/recipes/graph.hpp) on the CPU backend: a product
// over a semiring with transposed operands and a mask, a step between
// products on a transposed operand, each against the engine's reference;
// shapes that do not fit as taken, an unknown semiring and an op's bad
// operands refused before the job runs.
#include <gtest/gtest.h>

#include "core/recipes/graph.hpp"
#include "core_fixture.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

struct graph_recipes_test : ::testing::Test {
  std::unique_ptr<core::matrix_cache> cache;
  std::unique_ptr<core::scheduler> sched;
  core::estimate_memo memo{64};

  graph_recipes_test() {
    cache = std::make_unique<core::matrix_cache>(std::vector<std::shared_ptr<spgemm::backend>>{spgemm::make_cpu_backend(2)},
                                                 std::vector<std::size_t>{std::size_t{1} << 30}, 0, 0);
    sched = std::make_unique<core::scheduler>(*cache, 16, 2);
  }
  ~graph_recipes_test() override {
    sched->stop();
    sched.reset();
    cache.reset();
  }

  core::graph_operand stored(spgemm::csr_matrix<double> m, bool transposed = false) {
    spgemm::any_csr any = std::move(m);
    return {cache->acquire(core::caller{}, cache->insert_host(core::caller{}, any, "", 0).handle), transposed};
  }

  // The operands of a step (pins move, an initializer list would copy).
  static std::vector<core::graph_operand> operands(core::graph_operand a) {
    std::vector<core::graph_operand> out;
    out.push_back(std::move(a));
    return out;
  }
  static std::vector<core::graph_operand> operands(core::graph_operand a, core::graph_operand b) {
    std::vector<core::graph_operand> out = operands(std::move(a));
    out.push_back(std::move(b));
    return out;
  }

  // Runs `j` to its end; its product.
  spgemm::csr_matrix<double> result_of(std::shared_ptr<core::job> j) {
    auto ended = on_end(*j);
    const core::outcome submitted = sched->submit(std::move(j));
    EXPECT_TRUE(submitted.ok()) << submitted.message;
    EXPECT_TRUE(ready_within(ended, 10s));
    job_end e = ended.get();
    EXPECT_TRUE(e.result.ok()) << e.result.message;
    return std::get<spgemm::csr_matrix<double>>(cache->backends()[0]->fetch(*e.product));
  }
};

TEST_F(graph_recipes_test, a_masked_semiring_product_of_transposed_operands) {
  const auto a = spgemm::generate("er:300:6:1");
  const auto bt = spgemm::generate("er:300:5:2");
  const auto m = spgemm::generate("er:300:9:3");
  spgemm::multiply_options options;
  options.semiring = spgemm::parse_semiring("min_plus");
  std::shared_ptr<core::job> j;
  ASSERT_TRUE(core::mxm_job(memo, stored(a), stored(bt, true), stored(m), {true, true}, options, 0, &j).ok());
  EXPECT_EQ(j->steps.size(), 2u);  // B's transpose, the product
  const auto want = spgemm::cpu_masked_multiply(a, spgemm::cpu_transpose(bt), m, {true, true}, options.semiring);
  const auto got = result_of(j);
  EXPECT_EQ(got.row_offsets, want.row_offsets);
  EXPECT_EQ(got.col_indices, want.col_indices);
  EXPECT_EQ(got.values, want.values);
}

TEST_F(graph_recipes_test, a_step_between_products_on_a_transposed_operand) {
  const auto a = spgemm::generate("er:200:7:4");
  std::shared_ptr<core::job> j;
  const spgemm::matrix_op op = spgemm::reduce{spgemm::reduce_axis::rows, spgemm::monoid::plus, false};
  ASSERT_TRUE(core::op_job(op, operands(stored(a, true)), 0, &j).ok());
  EXPECT_EQ(j->kind, "reduce");
  const spgemm::any_csr t = spgemm::cpu_transpose(a);
  const auto want = std::get<spgemm::csr_matrix<double>>(spgemm::cpu_run_op(op, {&t}));
  const auto got = result_of(j);
  EXPECT_EQ(got.row_offsets, want.row_offsets);
  EXPECT_EQ(got.values, want.values);
}

TEST_F(graph_recipes_test, what_does_not_fit_is_refused_before_it_runs) {
  const auto wide = spgemm::generate("tall:40:30:2:5");  // 40 x 30
  std::shared_ptr<core::job> j;
  EXPECT_EQ(core::mxm_job(memo, stored(wide), stored(wide), std::nullopt, {}, {}, 0, &j).code,
            core::status::invalid_argument);
  EXPECT_TRUE(core::mxm_job(memo, stored(wide), stored(wide, true), std::nullopt, {}, {}, 0, &j).ok());
  const auto square = spgemm::generate("er:30:3:6");
  EXPECT_EQ(core::mxm_job(memo, stored(wide), stored(square), stored(square), {}, {}, 0, &j).code,
            core::status::invalid_argument);  // the mask is not 40 x 30
  spgemm::multiply_options lor_plus;
  lor_plus.semiring = {spgemm::monoid::lor, spgemm::binary_op::plus};
  EXPECT_EQ(core::mxm_job(memo, stored(square), stored(square), std::nullopt, {}, lor_plus, 0, &j).code,
            core::status::invalid_argument);
  EXPECT_EQ(core::op_job(spgemm::ewise_add{}, operands(stored(wide), stored(wide, true)), 0, &j).code,
            core::status::invalid_argument);
  EXPECT_EQ(core::op_job(spgemm::extract_rows{{40}}, operands(stored(wide)), 0, &j).code, core::status::invalid_argument);
}

}  // namespace
}  // namespace spgemmd::testing
