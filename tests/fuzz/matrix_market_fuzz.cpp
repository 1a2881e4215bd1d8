// Fuzzes the Matrix Market reader (spgemm::read_matrix_market), plain and
// gzip-compressed, from a file in memory: any input is read or refused with
// spgemm::error (bad input), and a matrix it reads is valid CSR. Inputs whose
// size line asks for more than 2^20 rows, or that decompress to more than
// 4 MiB, are passed over: those are large matrices, not malformed ones (CSR
// holds rows + 1 offsets, and the reader takes a file whole).
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "spgemm/errors.hpp"
#include "spgemm/io.hpp"
#include "spgemm/validate.hpp"

namespace {

// The text of the input: itself, or what gzip decompresses it to; "" past 4 MiB.
std::string text_of(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return std::string(reinterpret_cast<const char*>(data), size);
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return "";
  std::string out(4 << 20, '\0');
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  inflate(&z, Z_FINISH);
  out.resize(z.avail_out == 0 ? 0 : z.total_out);
  inflateEnd(&z);
  return out;
}

// Whether the size line (the first line after the banner that is not a comment) asks for few enough rows.
bool few_rows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    std::istringstream size_line(line);
    long long rows = 0;
    return !(size_line >> rows) || rows <= (1 << 20);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("matrix-market-fuzz", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const std::string text = text_of(data, size);
  if (text.empty() || !few_rows(text)) return 0;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  try {
    const spgemm::csr_matrix<double> m = spgemm::read_matrix_market(path);
    if (!spgemm::find_csr_problem(m).empty()) __builtin_trap();
  } catch (const spgemm::error& e) {
    if (e.kind() != spgemm::error_kind::bad_input) __builtin_trap();
  }
  return 0;
}
