#include "spgemm/generate.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

#include "spgemm/errors.hpp"
#include "spgemm/io.hpp"
#include "src/parallel.hpp"

namespace spgemm {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto p = s.find(sep);
    parts.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return parts;
    s.remove_prefix(p + 1);
  }
}

std::int64_t parse_positive(std::string_view spec, std::string_view text, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > max) {
    throw_bad_input("generator spec '" + std::string(spec) + "': '" + std::string(text) +
                    "' must be a whole number from 1 to " + std::to_string(max));
  }
  return v;
}

struct offset3 {
  int dx, dy, dz;
};

// Offsets of a stencil in the order that keeps columns sorted (z, then y, then x).
std::vector<offset3> stencil_offsets(int dims, bool full) {
  std::vector<offset3> offsets;
  const int zr = dims == 3 ? 1 : 0;
  for (int dz = -zr; dz <= zr; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        if (full || nonzero <= 1) offsets.push_back({dx, dy, dz});
      }
  return offsets;
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

csr_matrix<double> poisson(std::int64_t n, int dims, bool full) {
  const auto stencil = stencil_offsets(dims, full);
  const double center = static_cast<double>(stencil.size() - 1);
  return grid_matrix(n, n, dims == 3 ? n : 1, stencil, 1, [center](const offset3& d, int, int) {
    return d.dx == 0 && d.dy == 0 && d.dz == 0 ? center : -1.0;
  });
}

// A symmetric stand-in for a trilinear elasticity stiffness matrix: every
// block entry nonzero, the diagonal dominant.
csr_matrix<double> elasticity(std::int64_t n) {
  return grid_matrix(n, n, n, stencil_offsets(3, true), 3, [](const offset3& d, int a, int b) {
    const bool self = d.dx == 0 && d.dy == 0 && d.dz == 0;
    if (a == b) return self ? 80.0 : -4.0;
    const int da = a == 0 ? d.dx : a == 1 ? d.dy : d.dz;
    const int db = b == 0 ? d.dx : b == 1 ? d.dy : d.dz;
    return 0.5 + 0.25 * da * db;
  });
}

// splitmix64: a counter-based generator, so edge e's draws depend on (seed, e) only.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double unit_interval(std::uint64_t bits) {  // (0, 1]
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

csr_matrix<double> rmat(std::int64_t scale, std::int64_t edge_factor, std::uint64_t seed) {
  constexpr double a = 0.57, b = 0.19, c = 0.19;
  const std::int64_t n = std::int64_t{1} << scale;
  const std::int64_t edges = edge_factor * n;
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(edges));
  detail::parallel_slices(edges, detail::resolve_threads(0), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t e = begin; e < end; ++e) {
      std::uint64_t state = mix(seed ^ mix(static_cast<std::uint64_t>(e)));
      std::uint64_t row = 0, col = 0;
      for (std::int64_t level = 0; level < scale; ++level) {
        state = mix(state);
        const double u = unit_interval(state);
        const std::uint64_t down = u > a + b, right = (u > a && u <= a + b) || u > a + b + c;
        row = (row << 1) | down;
        col = (col << 1) | right;
      }
      keys[e] = (row << 32) | col;
    }
  });
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  csr_matrix<double> m;
  m.rows = m.cols = n;
  m.row_offsets.assign(static_cast<std::size_t>(n + 1), 0);
  m.col_indices.resize(keys.size());
  m.values.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::uint64_t row = keys[k] >> 32;
    m.col_indices[k] = static_cast<index_t>(keys[k] & 0xffffffffu);
    m.values[k] = unit_interval(mix(seed ^ mix(keys[k] + 0x5851f42d4c957f2dull)));
    ++m.row_offsets[row + 1];
  }
  for (std::int64_t r = 0; r < n; ++r) m.row_offsets[r + 1] += m.row_offsets[r];
  return m;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr std::array<std::string_view, 6> kinds = {"poisson2d5", "poisson2d9", "poisson3d7",
                                                   "poisson3d27", "elasticity3d", "rmat"};

}  // namespace

bool is_generator_spec(std::string_view spec) {
  const auto kind = spec.substr(0, spec.find(':'));
  return spec.find(':') != std::string_view::npos &&
         std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

csr_matrix<double> generate(std::string_view spec) {
  const auto parts = split(spec, ':');
  const auto kind = parts[0];
  auto arg = [&](std::size_t i, std::int64_t max) { return parse_positive(spec, parts[i], max); };
  auto expect = [&](std::size_t lo, std::size_t hi, const char* usage) {
    if (parts.size() < lo || parts.size() > hi) {
      throw_bad_input("generator spec '" + std::string(spec) + "': expected " + usage);
    }
  };
  if (kind == "poisson2d5" || kind == "poisson2d9") {
    expect(2, 2, "poisson2dK:N (an N x N grid)");
    return poisson(arg(1, 46340), 2, kind == "poisson2d9");
  }
  if (kind == "poisson3d7" || kind == "poisson3d27") {
    expect(2, 2, "poisson3dK:N (an N^3 grid)");
    return poisson(arg(1, 1290), 3, kind == "poisson3d27");
  }
  if (kind == "elasticity3d") {
    expect(2, 2, "elasticity3d:N (N^3 nodes)");
    return elasticity(arg(1, 800));
  }
  if (kind == "rmat") {
    expect(3, 4, "rmat:SCALE:EDGEFACTOR[:SEED]");
    const auto seed = parts.size() == 4 ? static_cast<std::uint64_t>(arg(3, std::int64_t{1} << 62)) : 1u;
    return rmat(arg(1, 30), arg(2, 1024), seed);
  }
  std::string known;
  for (auto k : kinds) known += (known.empty() ? "" : ", ") + std::string(k);
  throw_bad_input("unknown generator '" + std::string(kind) + "' in spec '" + std::string(spec) +
                  "' (known: " + known + ")");
}

csr_matrix<double> load_matrix(std::string_view spec_or_path) {
  if (is_generator_spec(spec_or_path)) return generate(spec_or_path);
  return read_matrix_market(std::string(spec_or_path));
}

std::string matrix_name(std::string_view spec_or_path) {
  if (is_generator_spec(spec_or_path)) return std::string(spec_or_path);
  auto name = spec_or_path.substr(spec_or_path.find_last_of('/') + 1);
  for (std::string_view suffix : {".mtx.gz", ".mtx"}) {
    if (ends_with(name, suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  return std::string(name);
}

}  // namespace spgemm
