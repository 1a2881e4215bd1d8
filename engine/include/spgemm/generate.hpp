// Matrices named by a spec string, as every command line accepts them. Every
// generator is deterministic: the result depends only on the spec (the seed is
// 1 unless given), never on the number of threads.
//
// Grids (stencils carry Laplacian values: diagonal = points - 1, -1 off it):
//   poisson2d5:N     N x N grid, 5-point Laplacian
//   poisson2d9:N     N x N grid, 9-point stencil
//   poisson3d7:N     N^3 grid, 7-point Laplacian
//   poisson3d13:N    N^3 grid, 13-point stencil: the 7 points and the second
//                    neighbours along each axis (fourth-order Laplacian)
//   poisson3d19:N    N^3 grid, 19-point stencil: the 3x3x3 cube without its corners
//   poisson3d27:N    N^3 grid, 27-point stencil
//   elasticity3d:N   N^3 nodes, 27-point stencil of 3x3 blocks (~81 per row):
//                    linear elasticity on unit trilinear hexahedra (Young's
//                    modulus 1, Poisson's ratio 0.3), the face x = 0 on springs
//                    of stiffness 1 per unknown; symmetric positive definite,
//                    the rigid-body modes its near null space (node-major:
//                    row 3 node + component, node = x + N (y + N z))
//   femblocks:N:MAXB[:SEED]  N^3 mesh nodes with 1..MAXB unknowns each (drawn
//                    per node), coupled like trilinear hexahedra (27 nodes),
//                    every node pair's block dense: irregular FEM blocks,
//                    ~27 (MAXB+1)/2 per row; symmetric, diagonally dominant
// Graphs (values uniform in (0, 1], duplicates removed):
//   rmat:SCALE:EF[:SEED]  2^SCALE vertices, EF * 2^SCALE directed edges drawn
//                    with a=.57, b=c=.19, d=.05 (R-MAT; heavy rows first)
//   kron:SCALE:EF:A:B:C[:SEED]  Kronecker graph as Graph500 makes it: EF *
//                    2^SCALE edges drawn with (A, B, C, D = 1-A-B-C), made
//                    symmetric, self-loops removed, vertices permuted
//   chunglu:N:AVGDEG:EXP[:SEED]  Chung-Lu power-law graph: expected degrees
//                    w_i ~ (i + i0)^(-1/(EXP-1)) (degree exponent EXP, 2 to 3
//                    as real graphs have) with mean AVGDEG and the largest
//                    sqrt(N * AVGDEG); N * AVGDEG / 2 edges with both ends drawn
//                    in proportion to w; symmetric, no self-loops, permuted
// Random (values uniform in (0, 1]):
//   er:N:D[:SEED]    N x N, D distinct uniformly random columns per row
//                    (Erdos-Renyi with a fixed row length)
//   band:N:BW:D[:SEED]  N x N, the diagonal and D-1 distinct random columns
//                    within BW of it per row (fewer where the border cuts the band)
//   circuit:N:D:K:L[:SEED]  N nodes: ~D couplings per row (half to nodes within
//                    64, half anywhere), K dense rows and columns of L entries
//                    (supply and ground nets), symmetric pattern, negative
//                    couplings and a dominant diagonal
//   tall:M:N:D[:SEED]  M x N (M >> N for the pieces of P^T A P), D distinct
//                    random columns per row
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "spgemm/csr.hpp"

namespace spgemm {

bool is_generator_spec(std::string_view spec);

// Throws error(bad_input) for an unknown or malformed spec.
csr_matrix<double> generate(std::string_view spec);

// A generator spec, or else the path of a Matrix Market file.
csr_matrix<double> load_matrix(std::string_view spec_or_path);

// The name a matrix goes by in tables: the spec, or the file's base name
// without `.mtx` / `.mtx.gz`.
std::string matrix_name(std::string_view spec_or_path);

// Which product an input asks for.
enum class product_kind { a_a, a_at, at_a };

// A product as command lines name it: `A` (C = A*A), `A,B` (C = A*B), then
// optional suffixes `/aat` (C = A*A^T) or `/ata` (C = A^T*A), and `/f32` or
// `/f64` (the value type), e.g. `tall:100000:1000:4/ata/f32`,
// `fast0507.mtx.gz/aat`. A product suffix does not combine with `A,B`.
struct product_input {
  std::string name;                     // for tables: "cage11", "a*b", "fast0507/aat", "er:1000:8/f32"
  std::string a_source;                 // spec or path of A
  std::string b_source;                 // of B; "" where B is A itself or its transpose
  product_kind product = product_kind::a_a;
  std::optional<value_type> precision;  // from /f32 or /f64
};

// `default_b` (a spec or path, "" for none) is B where the input names none.
product_input parse_product_input(std::string_view input, std::string_view default_b = {});

// The operands of that product in f64: A, and B where it is not A itself.
struct product_operands {
  csr_matrix<double> a;
  std::optional<csr_matrix<double>> b;
};
product_operands load_operands(const product_input& input);

}  // namespace spgemm
