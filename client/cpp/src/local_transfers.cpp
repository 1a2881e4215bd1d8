#include "local_transfers.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>

#include "call_context.hpp"
#include "parallel_copy.hpp"

namespace spgemm::client::detail {

namespace v1 = spgemm::v1;

namespace {

std::string random_hex(std::size_t bytes) {
  static std::random_device rd;  // /dev/urandom
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::string out;
  const char* digits = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned b = rd() & 0xff;
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::int64_t align64(std::int64_t n) { return (n + 63) & ~std::int64_t{63}; }

void check(const grpc::Status& s) {
  if (!s.ok()) throw Error(s);
}

}  // namespace

shm_object::shm_object(std::size_t bytes) : size_(bytes) {
  key_ = "/spgemm-cc-" + std::to_string(getpid()) + "-" + random_hex(8);
  const int fd = shm_open(key_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw Error(grpc::StatusCode::FAILED_PRECONDITION, "cannot create shared memory: " + std::string(std::strerror(errno)));
  int err = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (err == 0 && bytes > 0) err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* p = err == 0 && bytes > 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : nullptr;
  if (p == MAP_FAILED) err = errno;
  ::close(fd);
  if (err != 0) {
    shm_unlink(key_.c_str());
    throw Error(grpc::StatusCode::RESOURCE_EXHAUSTED,
                "cannot allocate " + std::to_string(bytes) + " bytes of shared memory: " + std::strerror(err));
  }
  data_ = static_cast<char*>(p);
}

shm_object::~shm_object() {
  if (data_) munmap(data_, size_);
  shm_unlink(key_.c_str());
}

std::int64_t local_transfers::region_bytes(std::int64_t rows, std::int64_t nnz, std::int64_t value_size) {
  return align64(align64(8 * (rows + 1)) + 4 * nnz) + value_size * nnz;
}

local_transfers::local_transfers(std::shared_ptr<grpc::Channel> channel, context_factory context,
                                 std::shared_ptr<cancellation> cancel)
    : stub_(v1::Local::NewStub(channel)), context_(std::move(context)), cancel_(std::move(cancel)) {}

std::unique_ptr<local_transfers> local_transfers::open(const std::shared_ptr<grpc::Channel>& channel,
                                                       const context_factory& context,
                                                       std::shared_ptr<cancellation> cancel, std::string* why_not) {
  std::unique_ptr<local_transfers> t(new local_transfers(channel, context, std::move(cancel)));
  try {
    // The proof: a token in a fresh object, read back by the server.
    const std::string token = random_hex(16);
    v1::ProveLocalRequest prove;
    v1::ProveLocalResponse proof;
    {
      shm_object object(token.size());
      std::memcpy(object.data(), token.data(), token.size());
      prove.set_key(object.key());
      prove.set_token(token);
      auto ctx = context(true);
      const grpc::Status s = t->stub_->ProveLocal(ctx.get(), prove, &proof);
      if (!s.ok()) {
        *why_not = "the server refused: " + s.error_message();
        return nullptr;
      }
    }
    if (!proof.shared_memory()) {
      *why_not = proof.same_host() ? "the server has shared memory turned off"
                                   : "the server does not share this host's shared memory";
      return nullptr;
    }
    t->session_context_ = context(/*deadline=*/false);
    t->session_ = t->stub_->OpenSession(t->session_context_.get(), v1::OpenSessionRequest());
    v1::SessionEvent event;
    if (!t->session_->Read(&event)) {
      *why_not = "the server opened no session: " + t->session_->Finish().error_message();
      t->session_.reset();
      return nullptr;
    }
    t->session_id_ = event.session();
  } catch (const Error& e) {
    *why_not = e.what();
    return nullptr;
  }
  return t;
}

local_transfers::~local_transfers() {
  for (arena* a : {&uploads_, &results_}) {
    if (!a->object) continue;
    auto ctx = context_(true);
    v1::UnregisterRegionRequest req;
    req.set_name(a->name);
    v1::UnregisterRegionResponse resp;
    (void)stub_->UnregisterRegion(ctx.get(), req, &resp);  // the session's end unregisters it all the same
  }
  if (session_) {
    session_context_->TryCancel();
    (void)session_->Finish();
  }
}

void local_transfers::ensure(arena& a, std::int64_t bytes) {
  const auto size_now = static_cast<std::int64_t>(a.object ? a.object->size() : 0);
  if (size_now >= bytes) return;
  std::int64_t size = std::max({bytes, 2 * size_now, std::int64_t{1} << 20});
  size = (size + 4095) / 4096 * 4096;
  auto object = std::make_unique<shm_object>(static_cast<std::size_t>(size));
  static std::atomic<int> counter{0};
  const std::string name = a.label + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  v1::RegisterRegionRequest req;
  req.set_session(session_id_);
  req.set_name(name);
  req.set_key(object->key());
  req.set_byte_size(size);
  v1::RegionInfo info;
  call_context ctx(context_(true), cancel_);
  check(stub_->RegisterRegion(ctx.get(), req, &info));
  // The server holds it open now: its name goes, so that a process that ends
  // without destroying the client leaves nothing in /dev/shm.
  shm_unlink(object->key().c_str());
  if (a.object) {
    auto unregister_ctx = context_(true);
    v1::UnregisterRegionRequest old;
    old.set_name(a.name);
    v1::UnregisterRegionResponse resp;
    (void)stub_->UnregisterRegion(unregister_ctx.get(), old, &resp);
  }
  a.object = std::move(object);
  a.name = name;
}

v1::RegionRef local_transfers::ref(const arena& a, std::int64_t offset, std::int64_t length) {
  v1::RegionRef r;
  r.set_region(a.name);
  r.set_offset(offset);
  r.set_length(length);
  return r;
}

v1::MatrixInfo local_transfers::upload(const matrix_ref& m, const upload_options& options) {
  const std::int64_t value_size = m.value_type == v1::FLOAT32 ? 4 : 8;
  const std::int64_t cols_at = align64(8 * (m.rows + 1)), values_at = align64(cols_at + 4 * m.nnz);
  std::lock_guard<std::mutex> lock(uploads_.mu);
  ensure(uploads_, region_bytes(m.rows, m.nnz, value_size));
  char* base = uploads_.object->data();
  // The server takes offsets from 0; a matrix_ref's may start anywhere.
  const std::int64_t first = m.row_offsets[0];
  auto* offsets = reinterpret_cast<std::int64_t*>(base);
  const auto offsets_count = static_cast<std::size_t>(m.rows + 1);
  for_each_piece(offsets_count, copy_threads(8 * offsets_count), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) offsets[r] = m.row_offsets[r] - first;
  });
  parallel_copy(base + cols_at, m.col_indices + first, static_cast<std::size_t>(4 * m.nnz));
  parallel_copy(base + values_at, static_cast<const char*>(m.values) + first * value_size,
                static_cast<std::size_t>(value_size * m.nnz));
  v1::RegionUploadRequest req;
  v1::MatrixHeader* h = req.mutable_header();
  h->set_rows(m.rows);
  h->set_cols(m.cols);
  h->set_nnz(m.nnz);
  h->set_value_type(m.value_type);
  h->set_index_type(v1::INT32);
  h->set_name(options.name);
  h->set_ttl_seconds(options.ttl_seconds);
  *req.mutable_row_offsets() = ref(uploads_, 0, 8 * (m.rows + 1));
  *req.mutable_col_indices() = ref(uploads_, cols_at, 4 * m.nnz);
  *req.mutable_values() = ref(uploads_, values_at, value_size * m.nnz);
  v1::MatrixInfo info;
  call_context ctx(context_(true), cancel_);
  check(stub_->UploadFromRegion(ctx.get(), req, &info));
  return info;
}

local_result local_transfers::read(const v1::RegionMatrix& m) const {
  const v1::MatrixHeader& h = m.header();
  const std::int64_t rows = h.rows(), nnz = h.nnz(), value_size = h.value_type() == v1::FLOAT32 ? 4 : 8;
  const auto size = static_cast<std::int64_t>(results_.object->size());
  // Within the region, and aligned for the arrays' elements (read in place).
  auto within = [&](const v1::RegionRef& r, std::int64_t bytes, std::int64_t align) {
    return r.region() == results_.name && r.offset() >= 0 && r.offset() % align == 0 && r.length() == bytes &&
           r.offset() <= size - bytes;
  };
  if (rows < 0 || nnz < 0 || !within(m.row_offsets(), 8 * (rows + 1), 8) || !within(m.col_indices(), 4 * nnz, 4) ||
      !within(m.values(), value_size * nnz, value_size)) {
    throw Error(grpc::StatusCode::INTERNAL, "the server wrote a result outside the result region");
  }
  const char* base = results_.object->data();
  local_result out;
  out.value_type = h.value_type();
  csr_matrix& c = out.matrix;
  c.rows = rows;
  c.cols = h.cols();
  const auto count = static_cast<std::size_t>(nnz);
  copy_to_vector(c.row_offsets, reinterpret_cast<const std::int64_t*>(base + m.row_offsets().offset()),
                 static_cast<std::size_t>(rows + 1));
  copy_to_vector(c.col_indices, reinterpret_cast<const std::int32_t*>(base + m.col_indices().offset()), count);
  if (value_size == 8) {
    copy_to_vector(c.values, reinterpret_cast<const double*>(base + m.values().offset()), count);
  } else {
    copy_to_vector(c.values, reinterpret_cast<const float*>(base + m.values().offset()), count);
  }
  if (c.row_offsets[0] != 0 || c.row_offsets[static_cast<std::size_t>(rows)] != nnz) {
    throw Error(grpc::StatusCode::INTERNAL, "the result's row offsets are not those of a CSR matrix");
  }
  return out;
}

}  // namespace spgemm::client::detail
