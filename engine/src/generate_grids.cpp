// Grid generators: stencils, elasticity blocks, irregular FEM blocks.
#include <algorithm>
#include <array>
#include <cmath>
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

// Grid nx * ny * nz, `block` unknowns per node, value(x, y, z, d, a, b) for
// the entry coupling component a of node (x, y, z) to component b of its
// neighbour at offset d.
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
              m.values.push_back(value(x, y, z, d, a, b));
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
  return grid_matrix(n, n, dims == 3 ? n : 1, stencil, 1,
                     [center](std::int64_t, std::int64_t, std::int64_t, const offset3& d, int, int) {
                       return d.dx == 0 && d.dy == 0 && d.dz == 0 ? center : -1.0;
                     });
}

// The stiffness matrix of a trilinear hexahedron (unit cube, Young's modulus
// 1, Poisson's ratio 0.3), 2 x 2 x 2 Gauss points: 24 x 24, unknown 3 c + a
// for component a of corner c = cx + 2 cy + 4 cz.
using element_matrix = std::array<std::array<double, 24>, 24>;

element_matrix hexahedron_stiffness() {
  const double nu = 0.3, lambda = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
  double elastic[6][6] = {};  // Voigt order xx, yy, zz, xy, yz, xz
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) elastic[i][j] = lambda;
    elastic[i][i] += 2 * mu;
    elastic[i + 3][i + 3] = mu;
  }
  element_matrix k{};
  const double gauss[2] = {0.5 - 0.5 / std::sqrt(3.0), 0.5 + 0.5 / std::sqrt(3.0)};
  for (int g = 0; g < 8; ++g) {
    const double xi[3] = {gauss[g & 1], gauss[(g >> 1) & 1], gauss[(g >> 2) & 1]};
    double strain[6][24] = {};  // strain of each unknown's unit displacement
    for (int c = 0; c < 8; ++c) {
      double grad[3];
      for (int axis = 0; axis < 3; ++axis) {
        grad[axis] = 1;
        for (int other = 0; other < 3; ++other) {
          const bool high = (c >> other) & 1;
          grad[axis] *= other == axis ? (high ? 1.0 : -1.0) : (high ? xi[other] : 1 - xi[other]);
        }
      }
      const int u = 3 * c;
      strain[0][u] = grad[0], strain[1][u + 1] = grad[1], strain[2][u + 2] = grad[2];
      strain[3][u] = grad[1], strain[3][u + 1] = grad[0];
      strain[4][u + 1] = grad[2], strain[4][u + 2] = grad[1];
      strain[5][u] = grad[2], strain[5][u + 2] = grad[0];
    }
    for (int i = 0; i < 24; ++i)
      for (int j = 0; j < 24; ++j) {
        double sum = 0;
        for (int p = 0; p < 6; ++p)
          for (int q = 0; q < 6; ++q) sum += strain[p][i] * elastic[p][q] * strain[q][j];
        k[i][j] += sum / 8;  // the Gauss weight of a unit cube
      }
  }
  return k;
}

// Linear elasticity on n^3 nodes of unit hexahedra (trilinear elements), the
// unknowns of the face x = 0 on springs of stiffness 1: symmetric positive
// definite, with the rigid-body modes as its near null space. Every pair of
// nodes of an element couples through a whole 3 x 3 block (entries that
// vanish by symmetry kept), so the pattern is the 27-point stencil of blocks.
csr_matrix<double> elasticity(std::int64_t n) {
  static const element_matrix k = hexahedron_stiffness();
  return grid_matrix(n, n, n, stencil_offsets(3, 1, 3), 3,
                     [n](std::int64_t x, std::int64_t y, std::int64_t z, const offset3& d, int a, int b) {
                       const std::int64_t p[3] = {x, y, z}, q[3] = {x + d.dx, y + d.dy, z + d.dz};
                       // The elements holding both nodes: corner e with e <= p, q <= e + 1 on every axis.
                       std::int64_t lo[3], hi[3];
                       for (int i = 0; i < 3; ++i) {
                         lo[i] = std::max<std::int64_t>(std::max(p[i], q[i]) - 1, 0);
                         hi[i] = std::min(std::min(p[i], q[i]), n - 2);
                       }
                       double v = 0;
                       for (std::int64_t ez = lo[2]; ez <= hi[2]; ++ez)
                         for (std::int64_t ey = lo[1]; ey <= hi[1]; ++ey)
                           for (std::int64_t ex = lo[0]; ex <= hi[0]; ++ex) {
                             const auto corner = [&](const std::int64_t* r) {
                               return static_cast<int>((r[0] - ex) + 2 * (r[1] - ey) + 4 * (r[2] - ez));
                             };
                             v += k[3 * corner(p) + a][3 * corner(q) + b];
                           }
                       const bool spring = x == 0 && d.dx == 0 && d.dy == 0 && d.dz == 0 && a == b;
                       return spring ? v + 1.0 : v;
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
