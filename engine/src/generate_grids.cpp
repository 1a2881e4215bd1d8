// Grid generators: stencils, elasticity blocks, irregular FEM blocks.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "src/generators.hpp"

namespace spgemm::generators {
namespace {

struct offset3 {
  int dx, dy, dz;
};

// The offsets of [-reach, reach]^dims with at most `max_nonzero` nonzero
// components (an offset reaching 2 only along an axis), in the order that
// keeps columns sorted (z, then y, then x).
std::vector<offset3> stencil_offsets(int dims, int reach, int max_nonzero) {
  std::vector<offset3> offsets;
  const int zr = dims == 3 ? reach : 0;
  for (int dz = -zr; dz <= zr; ++dz)
    for (int dy = -reach; dy <= reach; ++dy)
      for (int dx = -reach; dx <= reach; ++dx) {
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        const bool far = std::abs(dx) > 1 || std::abs(dy) > 1 || std::abs(dz) > 1;
        if (nonzero <= max_nonzero && (!far || nonzero == 1)) offsets.push_back({dx, dy, dz});
      }
  return offsets;
}

std::vector<offset3> stencil_of(int dims, int points) {
  switch (points) {
    case 5:
    case 7: return stencil_offsets(dims, 1, 1);
    case 9:
    case 27: return stencil_offsets(dims, 1, 3);
    case 13: return stencil_offsets(dims, 2, 1);
    case 19: return stencil_offsets(dims, 1, 2);
  }
  std::abort();  // generate() names only the stencils above
}

// Grid nx * ny * nz, `block` unknowns per node, value(d, a, b) for the entry
// coupling component a of a node to component b of its neighbour at offset d.
template <typename Value>
csr_matrix<double> grid_matrix(std::int64_t nx, std::int64_t ny, std::int64_t nz, const std::vector<offset3>& stencil,
                               int block, Value value) {
  csr_matrix<double> m;
  const std::int64_t nodes = nx * ny * nz;
  m.rows = m.cols = nodes * block;
  m.row_offsets.assign(1, 0);
  m.row_offsets.reserve(m.rows + 1);
  m.col_indices.reserve(static_cast<std::size_t>(m.rows) * stencil.size() * block);
  m.values.reserve(m.col_indices.capacity());
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        for (int a = 0; a < block; ++a) {
          for (const auto& d : stencil) {
            const std::int64_t qx = x + d.dx, qy = y + d.dy, qz = z + d.dz;
            if (qx < 0 || qx >= nx || qy < 0 || qy >= ny || qz < 0 || qz >= nz) continue;
            const std::int64_t q = qx + nx * (qy + ny * qz);
            for (int b = 0; b < block; ++b) {
              m.col_indices.push_back(static_cast<index_t>(q * block + b));
              m.values.push_back(value(d, a, b));
            }
          }
          m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
        }
  return m;
}

}  // namespace

csr_matrix<double> poisson(std::int64_t n, int dims, int points) {
  const auto stencil = stencil_of(dims, points);
  const double center = static_cast<double>(stencil.size() - 1);
  return grid_matrix(n, n, dims == 3 ? n : 1, stencil, 1, [center](const offset3& d, int, int) {
    return d.dx == 0 && d.dy == 0 && d.dz == 0 ? center : -1.0;
  });
}

// A symmetric stand-in for a trilinear elasticity stiffness matrix: every
// block entry nonzero, the diagonal dominant.
csr_matrix<double> elasticity(std::int64_t n) {
  return grid_matrix(n, n, n, stencil_offsets(3, 1, 3), 3, [](const offset3& d, int a, int b) {
    const bool self = d.dx == 0 && d.dy == 0 && d.dz == 0;
    if (a == b) return self ? 80.0 : -4.0;
    const int da = a == 0 ? d.dx : a == 1 ? d.dy : d.dz;
    const int db = b == 0 ? d.dx : b == 1 ? d.dy : d.dz;
    return 0.5 + 0.25 * da * db;
  });
}

// Nodes numbered x fastest, so a row's neighbours (z, y, x in order) and
// their unknowns come in increasing column order.
csr_matrix<double> fem_blocks(std::int64_t n, std::int64_t max_block, std::uint64_t seed) {
  const std::int64_t nodes = n * n * n;
  std::vector<std::int64_t> first(static_cast<std::size_t>(nodes + 1), 0);  // first unknown of each node
  for (std::int64_t p = 0; p < nodes; ++p) first[p + 1] = first[p] + 1 + draws(seed, p).below(max_block);
  const auto stencil = stencil_offsets(3, 1, 3);

  csr_matrix<double> m;
  m.rows = m.cols = first[nodes];
  m.row_offsets.assign(1, 0);
  m.row_offsets.reserve(m.rows + 1);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        const std::int64_t p = x + n * (y + n * z);
        for (std::int64_t row = first[p]; row < first[p + 1]; ++row) {
          double off_sum = 0;
          offset_t diagonal = -1;
          for (const auto& d : stencil) {
            const std::int64_t qx = x + d.dx, qy = y + d.dy, qz = z + d.dz;
            if (qx < 0 || qx >= n || qy < 0 || qy >= n || qz < 0 || qz >= n) continue;
            const std::int64_t q = qx + n * (qy + n * qz);
            for (std::int64_t col = first[q]; col < first[q + 1]; ++col) {
              if (col == row) diagonal = static_cast<offset_t>(m.col_indices.size());
              const double v = col == row ? 0.0 : -symmetric_unit(seed, row, col);
              m.col_indices.push_back(static_cast<index_t>(col));
              m.values.push_back(v);
              off_sum -= v;
            }
          }
          m.values[diagonal] = off_sum + 1.0;
          m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
        }
      }
  return m;
}

}  // namespace spgemm::generators
