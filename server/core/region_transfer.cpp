#include "core/region_transfer.hpp"

#include <type_traits>
#include <variant>
#include <vector>

namespace spgemmd::core {

outcome layout_of(const spgemm::matrix_info& info, int64_t length, csr_layout* out, bool* fits) {
  if (outcome o = layout_csr(info.rows, info.nnz, static_cast<int64_t>(spgemm::size_of(info.type)), out); !o.ok()) {
    return o;
  }
  *fits = out->bytes <= length;
  return {};
}

outcome write_rows(row_blocks& rows, const region_span& to, const csr_layout& layout) {
  const spgemm::offset_t zero = 0;
  if (outcome o = to.write(layout.row_offsets, &zero, sizeof zero); !o.ok()) return o;
  int64_t entries = 0;                    // written before the block
  std::vector<spgemm::offset_t> offsets;  // the block's, from the matrix's first entry
  while (rows.more()) {
    const row_blocks::block b = rows.next();
    const outcome written = std::visit(
        [&](const auto& m) -> outcome {
          using T = typename std::decay_t<decltype(m)>::value;
          const int64_t n = m.nnz();
          offsets.resize(static_cast<std::size_t>(m.rows));
          for (int64_t r = 0; r < m.rows; ++r) offsets[static_cast<std::size_t>(r)] = m.row_offsets[r + 1] + entries;
          const int64_t at = layout.row_offsets + (b.first_row + 1) * 8;
          if (outcome o = to.write(at, offsets.data(), m.rows * 8); !o.ok()) return o;
          if (outcome o = to.write(layout.col_indices + entries * 4, m.col_indices.data(), n * 4); !o.ok()) return o;
          const auto size = static_cast<int64_t>(sizeof(T));
          if (outcome o = to.write(layout.values + entries * size, m.values.data(), n * size); !o.ok()) return o;
          entries += n;
          return {};
        },
        *b.rows);
    if (!written.ok()) return written;
  }
  return {};
}

}  // namespace spgemmd::core
