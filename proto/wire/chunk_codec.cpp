#include "wire/chunk_codec.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "wire/populate.hpp"

namespace spgemm::wire {

namespace v1 = spgemm::v1;

static_assert(sizeof(int64_t) == 8 && sizeof(int32_t) == 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the chunk codec copies arrays as they are: a little-endian host is required"
#endif

namespace {

grpc::Status invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

std::size_t value_size(v1::ValueType type) {
  switch (type) {
    case v1::FLOAT32: return 4;
    case v1::FLOAT64: return 8;
    default: return 0;
  }
}

std::size_t chunk_payload_bytes(const csr_view& m, int64_t row_begin, int64_t row_end) {
  const auto nnz = static_cast<std::size_t>(m.row_offsets[row_end] - m.row_offsets[row_begin]);
  return static_cast<std::size_t>(row_end - row_begin + 1) * sizeof(int64_t) +
         nnz * (sizeof(int32_t) + value_size(m.value_type));
}

std::vector<std::pair<int64_t, int64_t>> plan_row_blocks(const csr_view& m, std::size_t chunk_bytes) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  // Room for the message framing (tags, lengths, row_begin, row_count).
  constexpr std::size_t framing = 64;
  const std::size_t limit = chunk_bytes > 2 * framing ? chunk_bytes - framing : framing;
  const std::size_t per_value = sizeof(int32_t) + value_size(m.value_type);
  int64_t begin = 0;
  while (begin < m.rows) {
    int64_t end = begin + 1;  // at least one row per chunk
    std::size_t bytes = 2 * sizeof(int64_t) +
                        static_cast<std::size_t>(m.row_offsets[end] - m.row_offsets[begin]) * per_value;
    while (end < m.rows) {
      const std::size_t next = sizeof(int64_t) +
                               static_cast<std::size_t>(m.row_offsets[end + 1] - m.row_offsets[end]) * per_value;
      if (bytes + next > limit) break;
      bytes += next;
      ++end;
    }
    blocks.emplace_back(begin, end);
    begin = end;
  }
  return blocks;
}

void fill_chunk(const csr_view& m, int64_t row_begin, int64_t row_end, v1::MatrixChunk* out) {
  const int64_t count = row_end - row_begin;
  const int64_t base = m.row_offsets[row_begin];
  const int64_t nnz = m.row_offsets[row_end] - base;
  out->set_row_begin(row_begin);
  out->set_row_count(count);

  std::string* offsets = out->mutable_row_offsets();
  offsets->resize(static_cast<std::size_t>(count + 1) * sizeof(int64_t));
  auto* dst = reinterpret_cast<unsigned char*>(offsets->data());
  for (int64_t i = 0; i <= count; ++i) {
    const int64_t rebased = m.row_offsets[row_begin + i] - base;
    std::memcpy(dst + i * sizeof(int64_t), &rebased, sizeof(int64_t));
  }
  out->mutable_col_indices()->assign(reinterpret_cast<const char*>(m.col_indices + base),
                                     static_cast<std::size_t>(nnz) * sizeof(int32_t));
  const std::size_t vs = value_size(m.value_type);
  out->mutable_values()->assign(static_cast<const char*>(m.values) + static_cast<std::size_t>(base) * vs,
                                static_cast<std::size_t>(nnz) * vs);
}

v1::MatrixHeader header_of(const csr_view& m, const std::string& name) {
  v1::MatrixHeader h;
  h.set_rows(m.rows);
  h.set_cols(m.cols);
  h.set_nnz(m.nnz);
  h.set_value_type(m.value_type);
  h.set_index_type(v1::INT32);
  h.set_name(name);
  return h;
}

grpc::Status chunk_assembler::check_header(const v1::MatrixHeader& h, bool result) {
  if (h.rows() < 0 || h.cols() < 0 || (h.nnz() < 0 && !(result && h.nnz() == unknown_nnz))) {
    return invalid("header: rows, cols and nnz must not be negative (got rows=" + str(h.rows()) +
                   ", cols=" + str(h.cols()) + ", nnz=" + str(h.nnz()) + ")");
  }
  if (value_size(h.value_type()) == 0) {
    return invalid("header: value_type must be FLOAT32 or FLOAT64 (got " +
                   std::to_string(static_cast<int>(h.value_type())) + ")");
  }
  if (h.index_type() == v1::INT64) {
    return invalid("header: index_type INT64 is not supported yet; send 32-bit column indices (INT32)");
  }
  if (h.index_type() != v1::INT32 && h.index_type() != v1::INDEX_TYPE_UNSPECIFIED) {
    return invalid("header: unknown index_type " + std::to_string(static_cast<int>(h.index_type())) +
                   "; use INT32");
  }
  constexpr int64_t max_cols = std::numeric_limits<int32_t>::max();
  if (h.cols() > max_cols) {
    return invalid("header: cols=" + str(h.cols()) + " exceeds what 32-bit column indices address (" +
                   str(max_cols) + ")");
  }
  if (h.rows() >= std::numeric_limits<int64_t>::max() / 8) {
    return invalid("header: rows=" + str(h.rows()) + " is too large");
  }
  const bool product_fits = h.rows() == 0 || h.cols() <= std::numeric_limits<int64_t>::max() / h.rows();
  if (product_fits && h.nnz() > h.rows() * h.cols()) {
    return invalid("header: nnz=" + str(h.nnz()) + " exceeds rows x cols (" + str(h.rows()) + " x " +
                   str(h.cols()) + ")");
  }
  if ((h.rows() == 0 || h.cols() == 0) && h.nnz() != 0) {
    return invalid("header: a " + str(h.rows()) + " x " + str(h.cols()) + " matrix cannot hold nnz=" +
                   str(h.nnz()));
  }
  if (h.ttl_seconds() < 0) return invalid("header: ttl_seconds must not be negative");
  return grpc::Status::OK;
}

namespace {

// Empties `v` and makes room for n elements: in its own memory where that is
// large enough, else in fresh memory with transparent huge pages asked for
// (Linux; a no-op elsewhere or where THP is off): with 4 KiB pages, writing
// fresh memory costs a page fault per 4 KiB. Returns the fresh bytes (0 when
// it kept its memory).
template <typename T>
std::size_t reserve_huge(std::vector<T>& v, std::size_t n) {
  v.clear();
  if (v.capacity() >= n) return 0;
  v = std::vector<T>();  // the old memory goes before the new comes
  v.reserve(n);
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1);
  const std::uintptr_t last = (begin + v.capacity() * sizeof(T)) & ~(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
  return v.capacity() * sizeof(T);
}

// Reads elements of T from raw little-endian bytes: lets vector::insert
// construct the new elements straight from the wire bytes (resize + memcpy
// would write every byte twice).
template <typename T>
class raw_reader {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = T;

  explicit raw_reader(const char* p) : p_(p) {}
  T operator*() const {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    return v;
  }
  T operator[](difference_type i) const { return *(*this + i); }
  raw_reader& operator++() { p_ += sizeof(T); return *this; }
  raw_reader operator++(int) { raw_reader r = *this; ++*this; return r; }
  raw_reader& operator--() { p_ -= sizeof(T); return *this; }
  raw_reader operator--(int) { raw_reader r = *this; --*this; return r; }
  raw_reader& operator+=(difference_type n) { p_ += n * static_cast<difference_type>(sizeof(T)); return *this; }
  raw_reader& operator-=(difference_type n) { return *this += -n; }
  friend raw_reader operator+(raw_reader r, difference_type n) { return r += n; }
  friend raw_reader operator+(difference_type n, raw_reader r) { return r += n; }
  friend raw_reader operator-(raw_reader r, difference_type n) { return r -= n; }
  friend difference_type operator-(raw_reader a, raw_reader b) {
    return (a.p_ - b.p_) / static_cast<difference_type>(sizeof(T));
  }
  friend bool operator==(raw_reader a, raw_reader b) { return a.p_ == b.p_; }
  friend bool operator!=(raw_reader a, raw_reader b) { return a.p_ != b.p_; }
  friend bool operator<(raw_reader a, raw_reader b) { return a.p_ < b.p_; }
  friend bool operator>(raw_reader a, raw_reader b) { return a.p_ > b.p_; }
  friend bool operator<=(raw_reader a, raw_reader b) { return a.p_ <= b.p_; }
  friend bool operator>=(raw_reader a, raw_reader b) { return a.p_ >= b.p_; }

 private:
  const char* p_;
};

// Appends n elements of T held as raw little-endian bytes at `src`.
template <typename T>
void append_raw(std::vector<T>& dst, const char* src, std::size_t n) {
  dst.insert(dst.end(), raw_reader<T>(src), raw_reader<T>(src + n * sizeof(T)));
}

}  // namespace

std::size_t csr_arrays::capacity_bytes() const {
  return row_offsets.capacity() * sizeof(int64_t) + col_indices.capacity() * sizeof(int32_t) +
         values_f32.capacity() * sizeof(float) + values_f64.capacity() * sizeof(double);
}

chunk_assembler::chunk_assembler(const v1::MatrixHeader& h, bool check_columns, csr_arrays reuse)
    : header_(h), value_size_(value_size(h.value_type())), check_columns_(check_columns), arrays_(std::move(reuse)) {
  std::vector<std::pair<void*, std::size_t>> fresh;
  std::size_t fresh_bytes = 0;
  auto reserve = [&](auto& v, std::size_t n) {
    if (const std::size_t bytes = reserve_huge(v, n); bytes > 0) {
      fresh.emplace_back(v.data(), bytes);
      fresh_bytes += bytes;
    }
  };
  const auto nnz = static_cast<std::size_t>(std::max<int64_t>(h.nnz(), 0));  // unknown: grown as chunks come
  reserve(arrays_.row_offsets, static_cast<std::size_t>(h.rows()) + 1);
  reserve(arrays_.col_indices, nnz);
  if (h.value_type() == v1::FLOAT32) {
    reserve(arrays_.values_f32, nnz);
  } else {
    reserve(arrays_.values_f64, nnz);
  }
  arrays_.row_offsets.push_back(0);
  constexpr std::size_t populate_from = 32 << 20;  // below, a thread costs about what it saves
  constexpr double window_bytes = 32 << 20;        // mapped ahead of the chunks: several chunks' worth
  if (fresh_bytes >= populate_from) {
    populate_ = std::make_unique<background_populate>(std::move(fresh));
    populate_window_ = window_bytes / static_cast<double>(fresh_bytes);
  }
}

void chunk_assembler::populate_ahead() {
  if (!populate_) return;
  auto part = [](int64_t have, int64_t of) { return of > 0 ? static_cast<double>(have) / static_cast<double>(of) : 1.0; };
  const double arrived = std::max(part(rows_received_, header_.rows()), part(nnz_received_, header_.nnz()));
  populate_->allow(arrived + populate_window_);
}

namespace {

std::size_t total_size(const std::vector<std::string_view>& pieces) {
  std::size_t n = 0;
  for (std::string_view p : pieces) n += p.size();
  return n;
}

// Appends the elements of T whose raw bytes are `pieces` (their total size a
// multiple of sizeof(T)); an element split between two pieces is joined.
template <typename T>
void append_pieces(std::vector<T>& dst, const std::vector<std::string_view>& pieces) {
  char carry[sizeof(T)];
  std::size_t have = 0;
  for (std::string_view piece : pieces) {
    if (piece.empty()) continue;  // its data() may be null, which memcpy may not be given even for 0 bytes
    const char* p = piece.data();
    std::size_t n = piece.size();
    if (have > 0) {
      const std::size_t take = std::min(sizeof(T) - have, n);
      std::memcpy(carry + have, p, take);
      have += take;
      p += take;
      n -= take;
      if (have < sizeof(T)) continue;
      append_raw(dst, carry, 1);
      have = 0;
    }
    const std::size_t whole = n / sizeof(T);
    append_raw(dst, p, whole);
    have = n - whole * sizeof(T);
    std::memcpy(carry, p + whole * sizeof(T), have);
  }
}

}  // namespace

grpc::Status chunk_assembler::add(const v1::MatrixChunk& c) {
  chunk_pieces pieces;
  pieces.row_begin = c.row_begin();
  pieces.row_count = c.row_count();
  pieces.row_offsets.emplace_back(c.row_offsets());
  pieces.col_indices.emplace_back(c.col_indices());
  pieces.values.emplace_back(c.values());
  return add(pieces);
}

grpc::Status chunk_assembler::add(const chunk_pieces& c) {
  auto where = [&] { return "chunk at row " + str(c.row_begin) + ": "; };
  if (c.row_begin != rows_received_) {
    return invalid(where() + "out of order or a chunk is missing: expected row_begin=" + str(rows_received_) +
                   " (chunks must cover the rows in order, without gaps or overlaps)");
  }
  if (c.row_count <= 0) return invalid(where() + "row_count must be positive (got " + str(c.row_count) + ")");
  if (c.row_count > header_.rows() - rows_received_) {
    return invalid(where() + "row_count=" + str(c.row_count) + " runs past the header's rows=" +
                   str(header_.rows()));
  }
  const std::size_t n_offsets = static_cast<std::size_t>(c.row_count) + 1;
  const std::size_t offset_bytes = total_size(c.row_offsets);
  if (offset_bytes != n_offsets * sizeof(int64_t)) {
    return invalid(where() + "row_offsets holds " + std::to_string(offset_bytes) +
                   " bytes; expected (row_count + 1) x 8 = " + std::to_string(n_offsets * sizeof(int64_t)));
  }
  // The offsets in one piece (they are a small part of a chunk).
  const char* raw = c.row_offsets.empty() ? nullptr : c.row_offsets.front().data();
  if (c.row_offsets.size() > 1) {
    offsets_scratch_.clear();
    for (std::string_view p : c.row_offsets) offsets_scratch_.append(p);
    raw = offsets_scratch_.data();
  }
  int64_t first = 0, last = 0;
  std::memcpy(&first, raw, sizeof(int64_t));
  std::memcpy(&last, raw + (n_offsets - 1) * sizeof(int64_t), sizeof(int64_t));
  if (first != 0) return invalid(where() + "row_offsets must be rebased to start at 0 (got " + str(first) + ")");
  if (last < 0 || (header_.nnz() != unknown_nnz && last > header_.nnz() - nnz_received_)) {
    return invalid(where() + "its " + str(last) + " nonzeros run past the header's nnz=" + str(header_.nnz()) +
                   " (" + str(nnz_received_) + " already received)");
  }
  const std::size_t col_bytes = total_size(c.col_indices);
  if (col_bytes != static_cast<std::size_t>(last) * sizeof(int32_t)) {
    return invalid(where() + "col_indices holds " + std::to_string(col_bytes) + " bytes; the offsets say " +
                   str(last) + " nonzeros x 4 bytes");
  }
  const std::size_t value_bytes = total_size(c.values);
  if (value_bytes != static_cast<std::size_t>(last) * value_size_) {
    return invalid(where() + "values holds " + std::to_string(value_bytes) + " bytes; the offsets say " +
                   str(last) + " nonzeros x " + std::to_string(value_size_) + " bytes");
  }
  // Rebase onto what arrived before and check the offsets never decrease, in
  // one pass (the vector was reserved for every row).
  const std::size_t old_rows = arrays_.row_offsets.size();
  arrays_.row_offsets.resize(old_rows + n_offsets - 1);
  int64_t* out = arrays_.row_offsets.data() + old_rows;
  int64_t prev = 0;
  bool decreasing = false;
  for (std::size_t i = 1; i < n_offsets; ++i) {
    int64_t v = 0;
    std::memcpy(&v, raw + i * sizeof(int64_t), sizeof(int64_t));
    decreasing |= v < prev;
    prev = v;
    out[i - 1] = nnz_received_ + v;
  }
  if (decreasing) {
    arrays_.row_offsets.resize(old_rows);
    int64_t p = 0;
    std::size_t i = 1;
    for (; i < n_offsets; ++i) {
      int64_t v = 0;
      std::memcpy(&v, raw + i * sizeof(int64_t), sizeof(int64_t));
      if (v < p) break;
      p = v;
    }
    return invalid(where() + "row_offsets decrease at row " + str(c.row_begin + static_cast<int64_t>(i) - 1));
  }
  append_pieces(arrays_.col_indices, c.col_indices);
  if (check_columns_) {
    if (grpc::Status st = check_chunk_columns(c.row_begin, out - 1, c.row_count); !st.ok()) {
      arrays_.row_offsets.resize(old_rows);
      arrays_.col_indices.resize(static_cast<std::size_t>(nnz_received_));
      return st;
    }
  }
  if (value_size_ == sizeof(float)) {
    append_pieces(arrays_.values_f32, c.values);
  } else {
    append_pieces(arrays_.values_f64, c.values);
  }
  rows_received_ += c.row_count;
  nnz_received_ += last;
  populate_ahead();
  return grpc::Status::OK;
}

grpc::Status chunk_assembler::check_chunk_columns(int64_t row_begin, const int64_t* offsets, int64_t rows) const {
  // `offsets` are the matrix's: offsets[0] is where the chunk's entries begin.
  const int64_t base = offsets[0];
  const int64_t n = offsets[rows] - base;
  if (n == 0) return grpc::Status::OK;
  const int32_t* col = arrays_.col_indices.data() + base;
  const auto cols = static_cast<uint32_t>(header_.cols());
  // The common case in one branch-free pass: every column in range (a
  // negative one reads as a large unsigned), and every step down from one
  // entry to the next at the start of a row.
  uint32_t max_col = static_cast<uint32_t>(col[0]);
  int64_t steps_down = 0;
  for (int64_t k = 1; k < n; ++k) {
    max_col = std::max(max_col, static_cast<uint32_t>(col[k]));
    steps_down += col[k] <= col[k - 1];
  }
  int64_t row_starts_down = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = offsets[r] - base;
    row_starts_down += k > 0 && k < offsets[r + 1] - base && col[k] <= col[k - 1];
  }
  if (max_col < cols && steps_down == row_starts_down) return grpc::Status::OK;

  // The first bad entry, for the message.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t begin = offsets[r] - base, end = offsets[r + 1] - base;
    for (int64_t k = begin; k < end; ++k) {
      const int32_t c = col[k];
      const bool outside = c < 0 || static_cast<uint32_t>(c) >= cols;
      if (!outside && (k == begin || c > col[k - 1])) continue;
      const std::string entry =
          "not valid CSR: row " + str(row_begin + r) + ": column " + str(c) + " (entry " + str(base + k) + ") ";
      if (outside) return invalid(entry + "is outside [0, " + str(header_.cols()) + ")");
      return invalid(entry + (c == col[k - 1] ? "duplicates" : "comes after") + " column " + str(col[k - 1]) +
                     " (columns within a row must be sorted and unique)");
    }
  }
  return grpc::Status::OK;
}

chunk_assembler::~chunk_assembler() = default;

grpc::Status chunk_assembler::finish() {
  populate_.reset();
  if (rows_received_ != header_.rows()) {
    return invalid("upload ended after " + str(rows_received_) + " of " + str(header_.rows()) +
                   " rows: chunks are missing");
  }
  if (header_.nnz() == unknown_nnz) header_.set_nnz(nnz_received_);
  if (nnz_received_ != header_.nnz()) {
    return invalid("upload ended with " + str(nnz_received_) + " nonzeros; the header announced nnz=" +
                   str(header_.nnz()));
  }
  return grpc::Status::OK;
}

}  // namespace spgemm::wire
