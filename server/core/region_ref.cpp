#include "core/region_ref.hpp"

namespace spgemmd::core {

namespace {

outcome invalid(std::string message) { return {status::invalid_argument, std::move(message)}; }

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

bool all_name_chars(const std::string& s, std::size_t from) {
  for (std::size_t i = from; i < s.size(); ++i) {
    if (!is_name_char(s[i])) return false;
  }
  return true;
}

// a + b, false where it overflows int64.
bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// The next multiple of 64 at or after `x`, false where it overflows.
bool align64(int64_t x, int64_t* out) {
  if (!add(x, 63, out)) return false;
  *out &= ~int64_t{63};
  return true;
}

}  // namespace

outcome check_range(int64_t region_size, int64_t offset, int64_t length, int64_t alignment, const std::string& what) {
  const std::string range = what + " [" + std::to_string(offset) + ", +" + std::to_string(length) + ")";
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
    return {status::internal, "alignment " + std::to_string(alignment) + " is not a power of two"};
  }
  if (region_size < 0) return invalid(range + ": the region has a negative size");
  if (offset < 0 || length < 0) return invalid(range + ": offset and length must not be negative");
  if (offset % alignment != 0 || length % alignment != 0) {
    return invalid(range + ": offset and length must be multiples of " + std::to_string(alignment) + " bytes");
  }
  // offset + length <= region_size, without forming a sum that may overflow.
  if (offset > region_size || length > region_size - offset) {
    return invalid(range + " lies outside its region of " + std::to_string(region_size) + " bytes");
  }
  return {};
}

outcome check_region_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || !all_name_chars(name, 0)) {
    return invalid("region name '" + name.substr(0, 160) + "': use 1-128 of A-Z a-z 0-9 . _ -");
  }
  return {};
}

outcome check_object_key(const std::string& key) {
  const std::size_t from = !key.empty() && key[0] == '/' ? 1 : 0;
  const std::size_t n = key.size() - from;
  if (n == 0 || n > 255 || !all_name_chars(key, from) || key.compare(from, n, ".") == 0 ||
      key.compare(from, n, "..") == 0) {
    return invalid("shared-memory object '" + key.substr(0, 300) +
                   "': use a POSIX shm name, an optional '/' and then 1-255 of A-Z a-z 0-9 . _ - (no other '/')");
  }
  return {};
}

outcome layout_csr(int64_t rows, int64_t nnz, int64_t value_size, csr_layout* out) {
  if (rows < 0 || nnz < 0 || (value_size != 4 && value_size != 8)) {
    return invalid("a matrix of " + std::to_string(rows) + " rows, " + std::to_string(nnz) +
                   " entries and values of " + std::to_string(value_size) + " bytes has no layout");
  }
  csr_layout l;
  int64_t offsets_bytes = 0, cols_bytes = 0, values_bytes = 0, end = 0;
  const bool fits = mul(rows, 8, &offsets_bytes) && add(offsets_bytes, 8, &offsets_bytes) &&
                    align64(offsets_bytes, &l.col_indices) && mul(nnz, 4, &cols_bytes) &&
                    add(l.col_indices, cols_bytes, &end) && align64(end, &l.values) &&
                    mul(nnz, value_size, &values_bytes) && add(l.values, values_bytes, &l.bytes);
  if (!fits) return invalid("a matrix of " + std::to_string(rows) + " rows and " + std::to_string(nnz) +
                            " entries is too large to lay out");
  *out = l;
  return {};
}

}  // namespace spgemmd::core
