#include "core/spill_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

// An unlinked file in `dir`, readable by this user only; -1 and errno where
// the directory cannot have one.
int temporary_file(const std::string& dir) {
  return ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

[[noreturn]] void io_failed(const char* what, int error) {
  throw std::runtime_error(std::string("spill file: ") + what + " failed: " + std::strerror(error));
}

// `io` (pread or pwrite) over all of `bytes` at `at`, through interruptions
// and short counts.
template <typename Io, typename Bytes>
void whole(Io io, const char* what, int fd, int64_t at, Bytes* p, std::size_t bytes) {
  while (bytes > 0) {
    const ssize_t done = io(fd, p, bytes, static_cast<off_t>(at));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) io_failed(what, done < 0 ? errno : EIO);
    p += done;
    at += done;
    bytes -= static_cast<std::size_t>(done);
  }
}

void write_all(int fd, int64_t at, const void* from, std::size_t bytes) {
  whole(::pwrite, "write", fd, at, static_cast<const char*>(from), bytes);
}

}  // namespace

spill_space::spill_space(std::string dir, std::size_t budget_bytes) : dir_(std::move(dir)), budget_(budget_bytes) {
  const int fd = temporary_file(dir_);
  if (fd < 0) {
    throw spgemm::error(spgemm::error_kind::bad_input,
                        "--spill_dir '" + dir_ + "' cannot hold temporary files: " + std::strerror(errno));
  }
  ::close(fd);
}

std::shared_ptr<spill_file> spill_space::open() {
  const int fd = temporary_file(dir_);
  if (fd < 0) io_failed("opening a file in the spill directory", errno);
  return std::make_shared<spill_file>(shared_from_this(), fd);
}

bool spill_space::try_take(std::size_t bytes) {
  std::size_t now = used_.load();
  do {
    if (now + bytes > budget_) return false;
  } while (!used_.compare_exchange_weak(now, now + bytes));
  return true;
}

spill_file::~spill_file() {
  ::close(fd_);
  space_->give_back(static_cast<std::size_t>(end_));
}

bool spill_file::write(const spgemm::any_csr& rows, std::shared_ptr<const spilled_rows>* out) {
  return std::visit(
      [&](const auto& m) {
        using T = typename std::decay_t<decltype(m)>::value;
        const std::size_t offsets = m.row_offsets.size() * sizeof(spgemm::offset_t);
        const std::size_t columns = m.col_indices.size() * sizeof(spgemm::index_t);
        const std::size_t values = m.values.size() * sizeof(T);
        const std::size_t bytes = offsets + columns + values;
        int64_t at = 0;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (!space_->try_take(bytes)) return false;
          at = end_;
          end_ += static_cast<int64_t>(bytes);
        }
        write_all(fd_, at, m.row_offsets.data(), offsets);
        write_all(fd_, at + static_cast<int64_t>(offsets), m.col_indices.data(), columns);
        write_all(fd_, at + static_cast<int64_t>(offsets + columns), m.values.data(), values);
        *out = std::make_shared<const spilled_rows>(shared_from_this(), spgemm::info_of(rows), at);
        return true;
      },
      rows);
}

void spill_file::read(int64_t at, void* to, std::size_t bytes) const {
  whole(::pread, "read", fd_, at, static_cast<char*>(to), bytes);
}

spilled_rows::spilled_rows(std::shared_ptr<const spill_file> file, spgemm::matrix_info info, int64_t at)
    : file_(std::move(file)),
      info_(info),
      offsets_at_(at),
      columns_at_(at + (info.rows + 1) * static_cast<int64_t>(sizeof(spgemm::offset_t))),
      values_at_(columns_at_ + info.nnz * static_cast<int64_t>(sizeof(spgemm::index_t))) {}

spgemm::any_csr spilled_rows::read(int64_t begin, int64_t end) const {
  auto fill = [&](auto m) -> spgemm::any_csr {
    using T = typename decltype(m)::value;
    m.rows = end - begin;
    m.cols = info_.cols;
    m.row_offsets.resize(static_cast<std::size_t>(end - begin) + 1);
    file_->read(offsets_at_ + begin * static_cast<int64_t>(sizeof(spgemm::offset_t)), m.row_offsets.data(),
                m.row_offsets.size() * sizeof(spgemm::offset_t));
    const spgemm::offset_t first = m.row_offsets.front(), last = m.row_offsets.back();
    for (spgemm::offset_t& o : m.row_offsets) o -= first;
    m.col_indices.resize(static_cast<std::size_t>(last - first));
    m.values.resize(static_cast<std::size_t>(last - first));
    file_->read(columns_at_ + first * static_cast<int64_t>(sizeof(spgemm::index_t)), m.col_indices.data(),
                m.col_indices.size() * sizeof(spgemm::index_t));
    file_->read(values_at_ + first * static_cast<int64_t>(sizeof(T)), m.values.data(), m.values.size() * sizeof(T));
    return m;
  };
  if (info_.type == spgemm::value_type::f32) return fill(spgemm::csr_matrix<float>{});
  return fill(spgemm::csr_matrix<double>{});
}

}  // namespace spgemmd::core
