// Matrix Market reading and writing, through zlib so that `.mtx.gz` and
// plain `.mtx` files take the same path (gzread passes plain files through).
#include "spgemm/io.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

struct gz_closer {
  void operator()(gzFile f) const { gzclose(f); }
};
using gz_file = std::unique_ptr<std::remove_pointer_t<gzFile>, gz_closer>;

std::string read_whole_file(const std::string& path) {
  gz_file file(gzopen(path.c_str(), "rb"));
  if (!file) throw_bad_input(path + ": cannot open (" + std::strerror(errno) + ")");
  gzbuffer(file.get(), 1 << 20);
  std::string text;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const int n = gzread(file.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      int code = 0;
      throw_bad_input(path + ": read failed (" + gzerror(file.get(), &code) + ")");
    }
    if (n == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
  }
  return text;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Walks the text line by line, keeping the line number for messages.
class line_reader {
 public:
  line_reader(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = std::string_view(text_).substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw_bad_input(path_ + ":" + std::to_string(number_) + ": " + what);
  }

 private:
  const std::string& path_;
  const std::string& text_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

const char* skip_blanks(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  return p;
}

template <typename N>
const char* parse_number(const char* p, const char* end, N& out, const line_reader& lines, const char* what) {
  p = skip_blanks(p, end);
  if (p < end && *p == '+') ++p;
  const auto [next, ec] = std::from_chars(p, end, out);
  if (ec != std::errc() || next == p) lines.fail(std::string("expected ") + what + ", found '" +
                                                  std::string(p, std::min<std::size_t>(end - p, 20)) + "'");
  return next;
}

template <typename N>
void append_number(std::string& out, N value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

struct coo_entry {
  index_t row;
  index_t col;
  double value;
};

}  // namespace

csr_matrix<double> read_matrix_market(const std::string& path) {
  const std::string text = read_whole_file(path);
  line_reader lines(path, text);
  std::string_view line;
  if (!lines.next(line) || lower(std::string(line.substr(0, 14))) != "%%matrixmarket") {
    lines.fail("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  }
  char object[32] = {}, format[32] = {}, field[32] = {}, symmetry[32] = {};
  const std::string banner(line);
  if (std::sscanf(banner.c_str(), "%*s %31s %31s %31s %31s", object, format, field, symmetry) != 4) {
    lines.fail("malformed banner '" + banner + "'");
  }
  if (lower(object) != "matrix" || lower(format) != "coordinate") {
    lines.fail("only 'matrix coordinate' files are supported, not '" + std::string(object) + " " + format + "'");
  }
  const std::string field_name = lower(field), symmetry_name = lower(symmetry);
  const bool pattern = field_name == "pattern";
  if (!pattern && field_name != "real" && field_name != "integer" && field_name != "double") {
    lines.fail("field '" + field_name + "' is not supported (real, integer or pattern)");
  }
  const bool symmetric = symmetry_name == "symmetric";
  if (!symmetric && symmetry_name != "general") {
    lines.fail("symmetry '" + symmetry_name + "' is not supported (general or symmetric)");
  }

  do {
    if (!lines.next(line)) lines.fail("missing the size line");
  } while (line.empty() || line[0] == '%');
  std::int64_t rows = 0, cols = 0, stored = 0;
  const char* p = line.data();
  const char* end = p + line.size();
  p = parse_number(p, end, rows, lines, "the row count");
  p = parse_number(p, end, cols, lines, "the column count");
  parse_number(p, end, stored, lines, "the entry count");
  if (rows < 0 || cols < 0 || stored < 0) lines.fail("negative size");
  if (symmetric && rows != cols) {
    lines.fail("a symmetric matrix must be square, not " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  if (cols > std::numeric_limits<index_t>::max() || rows > std::numeric_limits<index_t>::max()) {
    lines.fail("dimensions exceed the 32-bit index limit");
  }

  std::vector<coo_entry> entries;
  // An entry takes four bytes of the file at least ("1 1\n"): a size line
  // that claims more entries than that reserves no more than the file holds.
  const std::int64_t fit = std::min<std::int64_t>(stored, static_cast<std::int64_t>(text.size() / 4));
  entries.reserve(static_cast<std::size_t>(symmetric ? 2 * fit : fit));
  std::int64_t seen = 0;
  while (lines.next(line)) {
    if (line.empty() || line[0] == '%') continue;
    if (std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; })) continue;
    if (seen == stored) lines.fail("more entries than the " + std::to_string(stored) + " the size line declares");
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    p = line.data();
    end = p + line.size();
    p = parse_number(p, end, i, lines, "a row index");
    p = parse_number(p, end, j, lines, "a column index");
    if (!pattern) parse_number(p, end, v, lines, "a value");
    if (i < 1 || i > rows || j < 1 || j > cols) {
      lines.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                 std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    }
    entries.push_back({static_cast<index_t>(i - 1), static_cast<index_t>(j - 1), v});
    if (symmetric && i != j) entries.push_back({static_cast<index_t>(j - 1), static_cast<index_t>(i - 1), v});
    ++seen;
  }
  if (seen != stored) {
    throw_bad_input(path + ": the size line declares " + std::to_string(stored) + " entries but the file has " +
                    std::to_string(seen));
  }

  // Counting sort by row, then sort each row by column.
  csr_matrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(static_cast<std::size_t>(rows + 1), 0);
  for (const auto& e : entries) ++m.row_offsets[e.row + 1];
  std::partial_sum(m.row_offsets.begin(), m.row_offsets.end(), m.row_offsets.begin());
  std::vector<offset_t> next(m.row_offsets.begin(), m.row_offsets.end() - 1);
  std::vector<std::pair<index_t, double>> sorted(entries.size());
  for (const auto& e : entries) sorted[next[e.row]++] = {e.col, e.value};
  entries = {};
  m.col_indices.resize(sorted.size());
  m.values.resize(sorted.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    auto first = sorted.begin() + m.row_offsets[r], last = sorted.begin() + m.row_offsets[r + 1];
    std::sort(first, last, [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto it = first; it != last; ++it) {
      if (it != first && it->first == (it - 1)->first) {
        throw_bad_input(path + ": entry (" + std::to_string(r + 1) + ", " + std::to_string(it->first + 1) +
                        ") appears more than once" + (symmetric ? " (a symmetric file stores one triangle)" : ""));
      }
      const std::size_t k = static_cast<std::size_t>(it - sorted.begin());
      m.col_indices[k] = it->first;
      m.values[k] = it->second;
    }
  }
  return m;
}

template <typename T>
void write_matrix_market(const std::string& path, const csr_matrix<T>& m) {
  const bool compress = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  gz_file file(gzopen(path.c_str(), compress ? "wb6" : "wbT"));
  if (!file) throw_bad_input(path + ": cannot open for writing (" + std::strerror(errno) + ")");
  std::string out = "%%MatrixMarket matrix coordinate real general\n" + std::to_string(m.rows) + " " +
                    std::to_string(m.cols) + " " + std::to_string(m.nnz()) + "\n";
  auto flush = [&](bool force) {
    if (out.size() < (1 << 20) && !force) return;
    if (!out.empty() && gzwrite(file.get(), out.data(), static_cast<unsigned>(out.size())) == 0) {
      int code = 0;
      throw_bad_input(path + ": write failed (" + gzerror(file.get(), &code) + ")");
    }
    out.clear();
  };
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      append_number(out, r + 1);
      out.push_back(' ');
      append_number(out, m.col_indices[k] + 1);
      out.push_back(' ');
      append_number(out, m.values[k]);  // the shortest form that reads back exactly
      out.push_back('\n');
    }
    flush(false);
  }
  flush(true);
  if (gzclose(file.release()) != Z_OK) throw_bad_input(path + ": closing the file failed");
}

void write_matrix_market(const std::string& path, const any_csr& m) {
  std::visit([&](const auto& x) { write_matrix_market(path, x); }, m);
}

template void write_matrix_market(const std::string&, const csr_matrix<float>&);
template void write_matrix_market(const std::string&, const csr_matrix<double>&);

}  // namespace spgemm
