#include "rpc/upload_store.hpp"

#include <type_traits>
#include <utility>
#include <variant>

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace wire = spgemm::wire;

namespace {

// The arrays of `m`, for the next upload to be assembled into.
wire::csr_arrays arrays_of(spgemm::any_csr&& m) {
  wire::csr_arrays a;
  std::visit(
      [&](auto& c) {
        a.row_offsets = std::move(c.row_offsets);
        a.col_indices = std::move(c.col_indices);
        if constexpr (std::is_same_v<typename std::decay_t<decltype(c)>::value, float>) {
          a.values_f32 = std::move(c.values);
        } else {
          a.values_f64 = std::move(c.values);
        }
      },
      m);
  return a;
}

template <typename T>
spgemm::csr_matrix<T> assemble(wire::chunk_assembler& a) {
  spgemm::csr_matrix<T> m;
  m.rows = a.header().rows();
  m.cols = a.header().cols();
  m.row_offsets = std::move(a.row_offsets());
  m.col_indices = std::move(a.col_indices());
  if constexpr (std::is_same_v<T, float>) {
    m.values = std::move(a.values_f32());
  } else {
    m.values = std::move(a.values_f64());
  }
  return m;
}

}  // namespace

spgemm::host_csr_arrays host_arrays(wire::chunk_assembler& a) {
  spgemm::host_csr_arrays h;
  h.row_offsets = a.row_offsets().data();
  h.col_indices = a.col_indices().data();
  if (a.header().value_type() == v1::FLOAT32) {
    h.values = a.values_f32().data();
  } else {
    h.values = a.values_f64().data();
  }
  return h;
}

core::entry_info store_upload(spare_arrays& spares, wire::chunk_assembler& a, core::upload& up) {
  const v1::MatrixHeader h = a.header();
  spgemm::any_csr m;
  if (h.value_type() == v1::FLOAT32) {
    m = assemble<float>(a);
  } else {
    m = assemble<double>(a);
  }
  const core::entry_info e = up.store(m, h.ttl_seconds());
  spares.give(arrays_of(std::move(m)));  // empty where the host copy took them
  return e;
}

}  // namespace spgemmd
