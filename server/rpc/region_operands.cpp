#include "rpc/region_operands.hpp"

#include <cstddef>
#include <string>

#include "core/matrices.hpp"
#include "rpc/local_service.hpp"
#include "rpc/product_call.hpp"
#include "rpc/region_upload.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

grpc::Status invalid(const std::string& message) { return {grpc::StatusCode::INVALID_ARGUMENT, message}; }

// Stores the matrix `from` names as a temporary of `who`'s; its handle in `handle`.
grpc::Status store_temporary(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who,
                             const char* field, const v1::RegionUploadRequest& from, std::string* handle) {
  if (grpc::Status st = local_gate(s, ctx, local_feature::shared_memory); !st.ok()) return st;
  v1::MatrixInfo stored;
  const grpc::Status st = upload_from_region(s, who, from, &stored);
  if (!st.ok()) return {st.error_code(), std::string(field) + ": " + st.error_message()};
  *handle = stored.handle();
  return grpc::Status::OK;
}

// Deletes a temporary: pinned, it lives on until the job lets go of it.
void forget(service_state& s, const core::caller& who, const std::string& handle) {
  std::size_t freed = 0;
  (void)core::delete_matrix(s.cache, who, handle, &freed);
}

}  // namespace

grpc::Status multiply_operands(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who,
                               const v1::MultiplyRequest& request, core::pin* a, core::pin* b) {
  if (request.has_a_region() && !request.a().empty()) return invalid("a: a handle or a_region, not both");
  if (request.has_b_region() && !request.b().empty()) return invalid("b: a handle or b_region, not both");
  std::string a_temp, b_temp;
  grpc::Status st;
  if (request.has_a_region()) st = store_temporary(s, ctx, who, "a_region", request.a_region(), &a_temp);
  if (st.ok() && request.has_b_region()) st = store_temporary(s, ctx, who, "b_region", request.b_region(), &b_temp);
  const bool b_is_a = request.has_a_region() && !request.has_b_region() && request.b().empty();
  if (st.ok()) st = pin_matrix(s, who, "a", a_temp.empty() ? request.a() : a_temp, a);
  if (st.ok()) st = pin_matrix(s, who, "b", b_is_a ? a_temp : b_temp.empty() ? request.b() : b_temp, b);
  for (const std::string& temp : {a_temp, b_temp}) {
    if (!temp.empty()) forget(s, who, temp);
  }
  return st;
}

}  // namespace spgemmd
