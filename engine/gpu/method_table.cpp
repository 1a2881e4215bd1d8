#include "gpu/method_table.hpp"

#include <iterator>
#include <vector>

#include "bhsparse/bhsparse.hpp"
#include "block/block.hpp"
#include "dense/dense.hpp"
#include "dot/dot.hpp"
#include "esc/esc.hpp"
#include "hash/hash.hpp"
#include "rmerge/rmerge.hpp"
#include "segmerge/segmerge.hpp"
#include "spgemm/backend.hpp"

namespace spgemm {
namespace gpu {
namespace {

// A new method adds its row here (docs/architecture.md, "Adding a method").
const method::method rows[] = {
    {algorithm::rmerge, &rmerge::estimate, &rmerge::run<float>, &rmerge::run<double>, false, false, false,
     {&rmerge::estimate_numeric, &rmerge::run_numeric<float>, &rmerge::run_numeric<double>}},
    {algorithm::hash, &hash::estimate, &hash::run<float>, &hash::run<double>, true},
    {algorithm::esc, &esc::estimate, &esc::run<float>, &esc::run<double>, true, true},
    {algorithm::block, &block::estimate, &block::run<float>, &block::run<double>},
    {algorithm::dot, &dot::estimate, &dot::run<float>, &dot::run<double>, true, true, true},
    {algorithm::dense, &dense::estimate, &dense::run<float>, &dense::run<double>},
    {algorithm::bhsparse, &bhsparse::estimate, &bhsparse::run<float>, &bhsparse::run<double>},
    {algorithm::segmerge, &segmerge::estimate, &segmerge::run<float>, &segmerge::run<double>},
};

}  // namespace

// The numeric phase on a known structure of any method's product: the block
// method's numeric pass (with b = 1 on operands without blocks: a row-wise
// pass).
const method::table& methods() {
  static const method::table table{std::begin(rows), std::end(rows),
                                   {&block::estimate_numeric, &block::run_numeric<float>, &block::run_numeric<double>}};
  return table;
}

}  // namespace gpu

std::vector<algorithm> cuda_algorithms() {
  std::vector<algorithm> algos = {algorithm::automatic};
  for (const method::method& m : gpu::rows) {
    if (!m.masked_only) algos.push_back(m.algo);
  }
  return algos;
}

std::vector<algorithm> cuda_masked_algorithms() {
  std::vector<algorithm> algos = {algorithm::automatic};
  for (const method::method& m : gpu::rows) {
    if (m.masks) algos.push_back(m.algo);
  }
  return algos;
}

}  // namespace spgemm
