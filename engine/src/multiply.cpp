#include "spgemm/multiply.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

constexpr std::array<std::pair<algorithm, std::string_view>, 10> algorithm_table = {{
    {algorithm::automatic, "auto"},
    {algorithm::gustavson, "gustavson"},
    {algorithm::rmerge, "rmerge"},
    {algorithm::hash, "hash"},
    {algorithm::esc, "esc"},
    {algorithm::block, "block"},
    {algorithm::dot, "dot"},
    {algorithm::dense, "dense"},
    {algorithm::bhsparse, "bhsparse"},
    {algorithm::segmerge, "segmerge"},
}};

std::string shape(const matrix_info& m) { return std::to_string(m.rows) + " x " + std::to_string(m.cols); }

}  // namespace

std::string_view to_string(algorithm algo) {
  for (const auto& [a, name] : algorithm_table)
    if (a == algo) return name;
  return "unknown";
}

algorithm parse_algorithm(std::string_view name) {
  if (name.empty()) return algorithm::automatic;
  for (const auto& [a, known] : algorithm_table)
    if (known == name) return a;
  std::string list;
  for (const auto& [a, known] : algorithm_table) list += (list.empty() ? "" : ", ") + std::string(known);
  throw_bad_input("unknown algorithm '" + std::string(name) + "' (known: " + list + ")");
}

std::vector<std::string_view> algorithm_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : algorithm_table) names.push_back(entry.second);
  return names;
}

void require_conformable(const matrix_info& a, const matrix_info& b) {
  if (a.cols != b.rows) {
    throw_bad_input("shapes do not match for A * B: A is " + shape(a) + ", B is " + shape(b) +
                    " (columns of A must equal rows of B)");
  }
}

void require_mask_shape(const matrix_info& mask, std::int64_t rows, std::int64_t cols) {
  if (mask.rows != rows || mask.cols != cols) {
    throw_bad_input("the mask is " + shape(mask) + "; the product C is " + std::to_string(rows) + " x " +
                    std::to_string(cols) + " (a mask has C's shape)");
  }
}

namespace {

template <typename T, typename U>
product_stats product_stats_within(const csr_matrix<T>& a, const csr_matrix<U>& b, const offset_t* mask_row_offsets) {
  require_conformable(info_of(a), info_of(b));
  product_stats s;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::int64_t row_products = 0;
    index_t first = std::numeric_limits<index_t>::max();  // the columns the row's rows of B reach
    index_t last = -1;
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const index_t j = a.col_indices[k];
      const std::int64_t length = b.row_length(j);
      if (length == 0) continue;
      row_products += length;
      first = std::min(first, b.col_indices[b.row_offsets[j]]);
      last = std::max(last, b.col_indices[b.row_offsets[j + 1] - 1]);
    }
    s.products += row_products;
    s.max_row_products = std::max(s.max_row_products, row_products);
    const std::int64_t span = std::int64_t{last} - first + 1;
    std::int64_t bound = std::min({row_products, b.cols, span > 0 ? span : 0});
    if (mask_row_offsets != nullptr) bound = std::min(bound, mask_row_offsets[r + 1] - mask_row_offsets[r]);
    s.nnz_c_bound += bound;
    s.max_row_length_a = std::max(s.max_row_length_a, a.row_length(r));
  }
  return s;
}

}  // namespace

template <typename T, typename U>
product_stats compute_product_stats(const csr_matrix<T>& a, const csr_matrix<U>& b) {
  return product_stats_within(a, b, nullptr);
}

template <typename T, typename U>
product_stats compute_product_stats(const csr_matrix<T>& a, const csr_matrix<U>& b,
                                    const std::vector<offset_t>& mask_row_offsets) {
  if (static_cast<std::int64_t>(mask_row_offsets.size()) != a.rows + 1) {
    throw_bad_input("the mask has " + std::to_string(mask_row_offsets.size() - 1) + " rows; C has " +
                    std::to_string(a.rows));
  }
  return product_stats_within(a, b, mask_row_offsets.data());
}

template <typename T, typename U>
row_work compute_row_work(const csr_matrix<T>& a, const csr_matrix<U>& b) {
  require_conformable(info_of(a), info_of(b));
  row_work w;
  w.entries.resize(static_cast<std::size_t>(a.rows));
  w.products.resize(static_cast<std::size_t>(a.rows));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::int64_t products = 0;
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) products += b.row_length(a.col_indices[k]);
    w.entries[static_cast<std::size_t>(r)] = a.row_length(r);
    w.products[static_cast<std::size_t>(r)] = products;
  }
  return w;
}

value_type output_type_of(const matrix_info& a, const matrix_info& b, const multiply_options& options) {
  if (options.output_type) return *options.output_type;
  return a.type == value_type::f64 || b.type == value_type::f64 ? value_type::f64 : value_type::f32;
}

void cancel_token::throw_if_cancelled() const {
  if (cancelled()) throw error(error_kind::cancelled, "the job was cancelled");
}

template product_stats compute_product_stats(const csr_matrix<float>&, const csr_matrix<float>&);
template product_stats compute_product_stats(const csr_matrix<float>&, const csr_matrix<double>&);
template product_stats compute_product_stats(const csr_matrix<double>&, const csr_matrix<float>&);
template product_stats compute_product_stats(const csr_matrix<double>&, const csr_matrix<double>&);
template product_stats compute_product_stats(const csr_matrix<float>&, const csr_matrix<float>&,
                                             const std::vector<offset_t>&);
template product_stats compute_product_stats(const csr_matrix<float>&, const csr_matrix<double>&,
                                             const std::vector<offset_t>&);
template product_stats compute_product_stats(const csr_matrix<double>&, const csr_matrix<float>&,
                                             const std::vector<offset_t>&);
template product_stats compute_product_stats(const csr_matrix<double>&, const csr_matrix<double>&,
                                             const std::vector<offset_t>&);
template row_work compute_row_work(const csr_matrix<float>&, const csr_matrix<float>&);
template row_work compute_row_work(const csr_matrix<float>&, const csr_matrix<double>&);
template row_work compute_row_work(const csr_matrix<double>&, const csr_matrix<float>&);
template row_work compute_row_work(const csr_matrix<double>&, const csr_matrix<double>&);

}  // namespace spgemm
