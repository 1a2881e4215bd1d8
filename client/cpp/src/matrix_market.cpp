// Matrix Market reader and writer of the client (see matrix_market.hpp).
#include "spgemm/client/matrix_market.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <sstream>
#include <utility>

#include "spgemm/client/error.hpp"

namespace spgemm::client {
namespace {

struct gz_closer {
  void operator()(gzFile f) const { gzclose(f); }
};
using gz_ptr = std::unique_ptr<std::remove_pointer_t<gzFile>, gz_closer>;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Reads lines from a gzip or plain file (zlib reads both).
class line_reader {
 public:
  line_reader(const std::string& path) : path_(path) {
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) {
      throw Error(grpc::StatusCode::NOT_FOUND,
                  "cannot open '" + path + "': " + std::strerror(errno ? errno : ENOENT));
    }
    gzbuffer(file_.get(), 1 << 18);
  }

  // The next line without its newline; false at the end of the file.
  bool next(std::string& line) {
    line.clear();
    char buf[4096];
    while (true) {
      if (gzgets(file_.get(), buf, sizeof buf) == nullptr) {
        int err = 0;
        const char* msg = gzerror(file_.get(), &err);
        if (err != Z_OK && err != Z_STREAM_END) {
          throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                      path_ + ": line " + std::to_string(number_ + 1) + ": cannot read: " + msg);
        }
        if (line.empty()) return false;
        break;
      }
      line += buf;
      if (!line.empty() && line.back() == '\n') break;
    }
    ++number_;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return true;
  }

  std::int64_t number() const { return number_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                path_ + ": line " + std::to_string(number_) + ": " + what);
  }

 private:
  std::string path_;
  gz_ptr file_;
  std::int64_t number_ = 0;
};

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

struct entry {
  std::int32_t row;
  std::int32_t col;
  double value;
  std::int64_t line;
};

}  // namespace

csr_matrix read_matrix_market(const std::string& path) {
  line_reader in(path);
  std::string line;
  if (!in.next(line)) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT, path + ": empty file, not a Matrix Market file");
  }

  // Banner: %%MatrixMarket matrix coordinate <field> <symmetry>
  std::istringstream banner(line);
  std::string tag, object, format, field, symmetry;
  banner >> tag >> object >> format >> field >> symmetry;
  if (lower(tag) != "%%matrixmarket") in.fail("no '%%MatrixMarket' banner");
  object = lower(object);
  format = lower(format);
  field = lower(field);
  symmetry = lower(symmetry);
  if (object != "matrix") in.fail("unsupported object '" + object + "' (expected 'matrix')");
  if (format != "coordinate") in.fail("unsupported format '" + format + "' (expected 'coordinate')");
  const bool pattern = field == "pattern";
  if (field != "real" && field != "integer" && !pattern) {
    in.fail("unsupported field '" + field + "' (expected real, integer or pattern)");
  }
  const bool symmetric = symmetry == "symmetric";
  if (symmetry != "general" && !symmetric) {
    in.fail("unsupported symmetry '" + symmetry + "' (expected general or symmetric)");
  }

  // Size line, after comments and blank lines.
  bool have_size = false;
  while (in.next(line)) {
    if (line.empty() || line[0] == '%' || blank(line)) continue;
    have_size = true;
    break;
  }
  if (!have_size) in.fail("missing size line");
  long long rows = -1, cols = -1, declared = -1;
  {
    char* end = nullptr;
    const char* p = line.c_str();
    rows = std::strtoll(p, &end, 10);
    if (end == p) in.fail("bad size line '" + line + "'");
    p = end;
    cols = std::strtoll(p, &end, 10);
    if (end == p) in.fail("bad size line '" + line + "'");
    p = end;
    declared = std::strtoll(p, &end, 10);
    if (end == p) in.fail("bad size line '" + line + "'");
    if (!blank(end)) in.fail("bad size line '" + line + "'");
  }
  if (rows < 0 || cols < 0 || declared < 0) in.fail("negative size in '" + line + "'");
  if (rows > INT32_MAX || cols > INT32_MAX) in.fail("dimensions exceed 2^31 - 1");
  if (symmetric && rows != cols) in.fail("a symmetric matrix must be square");

  std::vector<entry> entries;
  entries.reserve(static_cast<std::size_t>(symmetric ? 2 * declared : declared));
  long long seen = 0;
  while (in.next(line)) {
    if (line.empty() || line[0] == '%' || blank(line)) continue;
    if (seen == declared) in.fail("more entries than the " + std::to_string(declared) + " declared");
    const char* p = line.c_str();
    char* end = nullptr;
    errno = 0;
    long long r = std::strtoll(p, &end, 10);
    if (end == p) in.fail("bad entry '" + line + "'");
    p = end;
    long long c = std::strtoll(p, &end, 10);
    if (end == p) in.fail("bad entry '" + line + "'");
    p = end;
    double v = 1.0;
    if (!pattern) {
      v = std::strtod(p, &end);
      if (end == p) in.fail("bad entry '" + line + "' (missing value)");
      p = end;
    }
    if (!blank(p)) in.fail("bad entry '" + line + "' (trailing text)");
    if (r < 1 || r > rows || c < 1 || c > cols) {
      in.fail("entry (" + std::to_string(r) + ", " + std::to_string(c) + ") outside the " +
              std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    }
    if (symmetric && c > r) {
      in.fail("entry (" + std::to_string(r) + ", " + std::to_string(c) +
              ") above the diagonal of a symmetric file");
    }
    ++seen;
    entries.push_back({static_cast<std::int32_t>(r - 1), static_cast<std::int32_t>(c - 1), v, in.number()});
    if (symmetric && r != c) {
      entries.push_back({static_cast<std::int32_t>(c - 1), static_cast<std::int32_t>(r - 1), v, in.number()});
    }
  }
  if (seen != declared) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                path + ": line " + std::to_string(in.number()) + ": found " + std::to_string(seen) +
                    " entries, the size line declares " + std::to_string(declared));
  }

  // Counting sort by row, then sort each row by column.
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (const auto& e : entries) ++m.row_offsets[static_cast<std::size_t>(e.row) + 1];
  std::partial_sum(m.row_offsets.begin(), m.row_offsets.end(), m.row_offsets.begin());
  std::vector<std::int64_t> next(m.row_offsets.begin(), m.row_offsets.end() - 1);
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order[static_cast<std::size_t>(next[entries[i].row]++)] = i;
  m.col_indices.resize(entries.size());
  m.values.resize(entries.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    auto b = order.begin() + m.row_offsets[r];
    auto e = order.begin() + m.row_offsets[r + 1];
    std::sort(b, e, [&](std::size_t x, std::size_t y) {
      return entries[x].col != entries[y].col ? entries[x].col < entries[y].col
                                              : entries[x].line < entries[y].line;
    });
    for (auto it = b; it != e; ++it) {
      const auto& en = entries[*it];
      if (it != b && entries[*(it - 1)].col == en.col) {
        const auto& first = entries[*(it - 1)];
        throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                    path + ": line " + std::to_string(std::max(first.line, en.line)) +
                        ": duplicate entry (" + std::to_string(en.row + 1) + ", " +
                        std::to_string(en.col + 1) + "), also at line " +
                        std::to_string(std::min(first.line, en.line)));
      }
      const auto k = static_cast<std::size_t>(it - order.begin());
      m.col_indices[k] = en.col;
      m.values[k] = en.value;
    }
  }
  return m;
}

namespace {

// The file a write goes to: a hidden temporary beside `path`, renamed to it by
// commit(); removed when the write fails or is interrupted. A path that exists
// and is not a regular file (a device, a pipe) is written in place.
class output_file {
 public:
  explicit output_file(const std::string& path) : path_(path) {
    struct stat st {};
    const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (!special) {
      const auto slash = path.find_last_of('/');
      const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
      const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
      temp_ = dir + "." + base + "." + std::to_string(::getpid()) + ".part";
    }
    const std::string& target = temp_.empty() ? path_ : temp_;
    fd_ = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) fail(std::strerror(errno));
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  }

  // The descriptor, handed over to its new owner (gzdopen).
  int release() { return std::exchange(fd_, -1); }

  void commit() {
    if (!temp_.empty() && std::rename(temp_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
    committed_ = true;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(grpc::StatusCode::INTERNAL, "cannot write '" + path_ + "': " + why);
  }

 private:
  std::string path_;
  std::string temp_;  // empty: written in place
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_matrix_market(const std::string& path, const csr_matrix& m, const progress_callback& on_progress) {
  output_file out(path);
  const bool gz = ends_with(path, ".gz");
  gz_ptr file(gzdopen(out.release(), gz ? "wb1" : "wbT"));
  if (!file) out.fail("cannot start the zlib stream");
  gzbuffer(file.get(), 1 << 18);
  progress p;
  p.total_rows = m.rows;
  std::string buf;
  buf.reserve(1 << 20);
  auto flush = [&] {
    if (!buf.empty() &&
        gzwrite(file.get(), buf.data(), static_cast<unsigned>(buf.size())) != static_cast<int>(buf.size())) {
      int err = 0;
      out.fail(gzerror(file.get(), &err));
    }
    p.bytes += static_cast<std::int64_t>(buf.size());
    buf.clear();
  };
  char line[96];
  buf += "%%MatrixMarket matrix coordinate real general\n";
  std::snprintf(line, sizeof line, "%" PRId64 " %" PRId64 " %" PRId64 "\n", m.rows, m.cols, m.nnz());
  buf += line;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (std::int64_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      int n = std::snprintf(line, sizeof line, "%" PRId64 " %d %.17g\n", r + 1,
                            m.col_indices[static_cast<std::size_t>(k)] + 1, m.values[static_cast<std::size_t>(k)]);
      buf.append(line, static_cast<std::size_t>(n));
    }
    if (buf.size() > (1u << 20) - 4096) {
      flush();
      p.rows = r + 1;
      if (on_progress) on_progress(p);
    }
  }
  flush();
  if (gzclose(file.release()) != Z_OK) out.fail("close failed");
  out.commit();
  p.rows = m.rows;
  p.done = true;
  if (on_progress) on_progress(p);
}

}  // namespace spgemm::client
