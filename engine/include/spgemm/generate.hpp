// Matrices named by a spec string, as every command line accepts them:
//
//   poisson2d5:N     N x N grid, 5-point Laplacian    (diagonal 4, -1 off)
//   poisson2d9:N     N x N grid, 9-point stencil      (diagonal 8, -1 off)
//   poisson3d7:N     N^3 grid, 7-point Laplacian      (diagonal 6, -1 off)
//   poisson3d27:N    N^3 grid, 27-point stencil       (diagonal 26, -1 off)
//   elasticity3d:N   N^3 nodes, 27-point stencil of 3x3 blocks (~81 per row)
//   rmat:SCALE:EF[:SEED]  2^SCALE vertices, EF * 2^SCALE directed edges drawn
//                    with a=.57, b=c=.19, d=.05, duplicates removed, values
//                    uniform in (0, 1]; seed 1 unless given. The result depends
//                    only on the spec, never on the number of threads.
#pragma once

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

}  // namespace spgemm
