#include "rpc/region_upload.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "core/device_transfer.hpp"
#include "core/matrices.hpp"
#include "core/region_ref.hpp"
#include "core/region_registry.hpp"
#include "core/upload.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"
#include "rpc/upload_store.hpp"
#include "wire/chunk_codec.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

// Entries read per block: the assembler copies each block while it is still
// in the cache, and the device copy starts after the first few.
constexpr int64_t block_bytes = 4 << 20;

grpc::Status invalid(const std::string& message) { return {grpc::StatusCode::INVALID_ARGUMENT, message}; }

// The span `ref` names: exactly `bytes` long, at an `alignment`-byte boundary.
grpc::Status resolve(service_state& s, const core::caller& who, const v1::RegionRef& ref, int64_t bytes,
                     int64_t alignment, const char* what, core::region_span* out) {
  if (ref.length() != bytes) {
    return invalid(std::string(what) + ": " + std::to_string(ref.length()) + " bytes given, the header's shape needs " +
                   std::to_string(bytes));
  }
  return to_grpc_status(s.regions.resolve(who, ref.region(), ref.offset(), ref.length(), alignment, what, out));
}

std::string_view view(const std::vector<char>& v, std::size_t bytes) { return {v.data(), bytes}; }

// Where the server has GPUs and the regions can be pinned for them: stored
// host to device by the copy engines and checked on the device, no copy by
// the CPU (core::store_from_pinned). Nothing where they cannot.
std::optional<grpc::Status> upload_pinned(service_state& s, const core::caller& who, const v1::MatrixHeader& h,
                                          const spgemm::matrix_info& info, const core::region_span& offsets,
                                          const core::region_span& columns, const core::region_span& values,
                                          v1::MatrixInfo* out) {
  const std::shared_ptr<spgemm::backend> gpu = core::any_gpu(s.cache);
  if (!gpu) return std::nullopt;
  const auto at = [&](const core::region_span& span) -> const char* {
    const char* base = span.object->pinned_for(gpu, span.at + span.length);
    return base == nullptr ? nullptr : base + span.at;
  };
  const char *o = at(offsets), *c = at(columns), *v = at(values);
  if (o == nullptr || c == nullptr || v == nullptr) return std::nullopt;
  core::entry_info e;
  grpc::Status st = to_grpc_status(core::store_from_pinned(
      s.cache, s.sched, who, info,
      {reinterpret_cast<const spgemm::offset_t*>(o), reinterpret_cast<const spgemm::index_t*>(c), v}, h.name(),
      h.ttl_seconds(), &e));
  if (st.ok()) to_proto(e, out);
  return st;
}

}  // namespace

grpc::Status upload_from_region(service_state& s, const core::caller& who, const v1::RegionUploadRequest& request,
                                v1::MatrixInfo* out) {
  const v1::MatrixHeader& h = request.header();
  if (grpc::Status st = wire::chunk_assembler::check_header(h); !st.ok()) return st;
  const spgemm::matrix_info info{h.rows(), h.cols(), h.nnz(),
                                 h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64};
  core::csr_layout sizes;  // where the sizes below cannot overflow
  if (const core::outcome o = core::layout_csr(h.rows(), h.nnz(), 8, &sizes); !o.ok()) return to_grpc_status(o);
  if (const core::outcome named = core::check_name("header.name", h.name()); !named.ok()) {
    return to_grpc_status(named);
  }
  if (const core::outcome fits = core::upload::check(s.cache, who, info); !fits.ok()) return to_grpc_status(fits);
  const auto value_size = static_cast<int64_t>(wire::value_size(h.value_type()));
  core::region_span offsets, columns, values;
  grpc::Status st = resolve(s, who, request.row_offsets(), (h.rows() + 1) * 8, 8, "row_offsets", &offsets);
  if (st.ok()) st = resolve(s, who, request.col_indices(), h.nnz() * 4, 4, "col_indices", &columns);
  if (st.ok()) st = resolve(s, who, request.values(), h.nnz() * value_size, value_size, "values", &values);
  if (!st.ok()) return st;
  if (std::optional<grpc::Status> pinned = upload_pinned(s, who, h, info, offsets, columns, values, out)) {
    return *pinned;
  }

  try {
    wire::chunk_assembler assembler(h, /*check_columns=*/true, s.upload_arrays.take(h.rows(), h.nnz(), h.value_type()));
    std::optional<core::upload> up;  // copies from the assembler's arrays: goes before them
    up.emplace(s.cache, s.sched, who, info, h.name(), host_arrays(assembler));
    // Rows per block from the average row; a longer row gets a block of its own.
    const int64_t row_bytes = std::max<int64_t>(1, info.bytes() / std::max<int64_t>(1, h.rows()));
    const int64_t rows_per_block = std::max<int64_t>(1, block_bytes / row_bytes);
    std::vector<char> offsets_read, columns_read, values_read;
    for (int64_t r0 = 0; r0 < h.rows();) {
      const int64_t r1 = std::min(h.rows(), r0 + rows_per_block);
      const int64_t n_offsets = r1 - r0 + 1;
      offsets_read.resize(static_cast<std::size_t>(n_offsets * 8));
      auto* o = reinterpret_cast<int64_t*>(offsets_read.data());
      if (core::outcome r = offsets.read(r0 * 8, o, n_offsets * 8); !r.ok()) return to_grpc_status(r);
      // The block starts where the last one ended (the first at 0); its
      // entries lie within the matrix's. The assembler checks the rest.
      const int64_t base = o[0], end = o[n_offsets - 1];
      if (base != assembler.nnz_received() || end < base || end > h.nnz()) {
        return invalid("row_offsets[" + std::to_string(r0) + "] = " + std::to_string(base) + " and row_offsets[" +
                       std::to_string(r1) + "] = " + std::to_string(end) + ": offsets must start at 0, not decrease "
                       "and end at nnz = " + std::to_string(h.nnz()) + " (or they changed while being read)");
      }
      for (int64_t i = 0; i < n_offsets; ++i) o[i] -= base;
      const int64_t n = end - base;
      columns_read.resize(static_cast<std::size_t>(n * 4));
      values_read.resize(static_cast<std::size_t>(n * value_size));
      if (core::outcome r = columns.read(base * 4, columns_read.data(), n * 4); !r.ok()) return to_grpc_status(r);
      if (core::outcome r = values.read(base * value_size, values_read.data(), n * value_size); !r.ok()) {
        return to_grpc_status(r);
      }
      wire::chunk_pieces block;
      block.row_begin = r0;
      block.row_count = r1 - r0;
      block.row_offsets = {view(offsets_read, offsets_read.size())};
      block.col_indices = {view(columns_read, columns_read.size())};
      block.values = {view(values_read, values_read.size())};
      if (st = assembler.add(block); !st.ok()) return st;
      up->arrived(assembler.rows_received(), assembler.nnz_received());
      r0 = r1;
    }
    if (st = assembler.finish(); !st.ok()) return st;
    to_proto(store_upload(s.upload_arrays, assembler, *up), out);
  } catch (...) {
    return to_grpc_status(std::current_exception());
  }
  return grpc::Status::OK;
}

}  // namespace spgemmd
