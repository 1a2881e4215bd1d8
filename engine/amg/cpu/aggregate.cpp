// Aggregation on the CPU: the rounds of the distance-2 independent set and
// the two sweeps that grow aggregates around its members, as the GPU kernels
// run them (amg/independent_set_rule.hpp), one node after another.
#include <algorithm>
#include <limits>

#include "amg/cpu/passes.hpp"
#include "amg/independent_set_rule.hpp"

namespace spgemm::amg::cpu {
namespace {

bool isolated(const csr_matrix<float>& g, std::int64_t i) {
  for (offset_t k = g.row_offsets[i]; k < g.row_offsets[i + 1]; ++k) {
    if (g.col_indices[k] != i) return false;
  }
  return true;
}

// The largest key of each node and its neighbours.
std::vector<std::uint64_t> neighbourhood_max(const csr_matrix<float>& g, const std::vector<std::uint64_t>& key) {
  std::vector<std::uint64_t> out(key);
  for (std::int64_t i = 0; i < g.rows; ++i) {
    for (offset_t k = g.row_offsets[i]; k < g.row_offsets[i + 1]; ++k) out[i] = std::max(out[i], key[g.col_indices[k]]);
  }
  return out;
}

}  // namespace

independent_set distance2_independent_set(const csr_matrix<float>& graph) {
  const std::int64_t n = graph.rows;
  std::vector<std::uint64_t> state(static_cast<std::size_t>(n)), key(static_cast<std::size_t>(n));
  std::int64_t undecided = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    state[i] = isolated(graph, i) ? state_out : state_undecided;
    undecided += state[i] == state_undecided;
  }
  independent_set set;
  // At least one round, as the GPU's loop (it learns what is left after a round).
  for (bool first = true; n > 0 && (first || undecided > 0); first = false) {
    ++set.rounds;
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t neighbours = 0;
      for (offset_t k = graph.row_offsets[i]; k < graph.row_offsets[i + 1]; ++k) {
        const index_t j = graph.col_indices[k];
        neighbours += j != i && state[j] == state_undecided;
      }
      key[i] = node_key(state[i], neighbours, i);
    }
    const std::vector<std::uint64_t> near = neighbourhood_max(graph, neighbourhood_max(graph, key));
    for (std::int64_t i = 0; i < n; ++i) {
      if (state[i] != state_undecided) continue;
      state[i] = decide(i, near[i]);
      undecided -= state[i] != state_undecided;
    }
  }
  set.member.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) set.member[i] = state[i] == state_member;
  return set;
}

node_aggregates aggregate(const csr_matrix<float>& graph) {
  const std::int64_t n = graph.rows;
  const independent_set set = distance2_independent_set(graph);
  node_aggregates out;
  out.rounds = set.rounds;
  out.of_node.assign(static_cast<std::size_t>(n), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    if (set.member[i]) out.of_node[i] = static_cast<index_t>(out.count++);
  }
  // A root's neighbours: no node has two roots within one step.
  std::vector<index_t> first = out.of_node;
  for (std::int64_t i = 0; i < n; ++i) {
    if (first[i] >= 0) continue;
    for (offset_t k = graph.row_offsets[i]; k < graph.row_offsets[i + 1]; ++k) {
      const index_t j = graph.col_indices[k];
      if (set.member[j]) first[i] = out.of_node[j];
    }
  }
  // Two steps away: the smallest aggregate among the neighbours of the first sweep.
  out.of_node = first;
  for (std::int64_t i = 0; i < n; ++i) {
    if (first[i] >= 0) continue;
    index_t smallest = std::numeric_limits<index_t>::max();
    for (offset_t k = graph.row_offsets[i]; k < graph.row_offsets[i + 1]; ++k) {
      const index_t a = first[graph.col_indices[k]];
      if (a >= 0) smallest = std::min(smallest, a);
    }
    if (smallest != std::numeric_limits<index_t>::max()) out.of_node[i] = smallest;
  }
  return out;
}

csr_matrix<double> aggregation_matrix(const node_aggregates& a) {
  csr_matrix<double> m;
  m.rows = static_cast<std::int64_t>(a.of_node.size());
  m.cols = a.count;
  m.row_offsets.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  for (std::int64_t i = 0; i < m.rows; ++i) {
    if (a.of_node[i] >= 0) {
      m.col_indices.push_back(a.of_node[i]);
      m.values.push_back(1.0);
    }
    m.row_offsets[i + 1] = m.nnz();
  }
  return m;
}

}  // namespace spgemm::amg::cpu
