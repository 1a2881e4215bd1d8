#include "rpc/request_operands.hpp"

#include <cstddef>

#include "core/matrices.hpp"
#include "rpc/local_service.hpp"
#include "rpc/product_call.hpp"
#include "rpc/region_upload.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

request_operands::~request_operands() {
  for (const std::string& handle : stored_) {
    std::size_t freed = 0;
    (void)core::delete_matrix(s_.cache, who_, handle, &freed);
  }
}

grpc::Status request_operands::pin(const std::string& field, const std::string& handle, const operand_source& from,
                                   core::pin* out, std::string* pinned) {
  if (!from.given()) {
    if (pinned != nullptr) *pinned = handle;
    return pin_matrix(s_, who_, field.c_str(), handle, out);
  }
  if (!handle.empty() || (from.region != nullptr && from.device != nullptr)) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            field + ": one of a handle, " + field + "_region and " + field + "_device, not several"};
  }
  const std::string source = field + (from.region != nullptr ? "_region" : "_device");
  const local_feature feature = from.region != nullptr ? local_feature::shared_memory : local_feature::cuda_ipc;
  if (grpc::Status st = local_gate(s_, ctx_, feature); !st.ok()) return {st.error_code(), source + ": " + st.error_message()};
  v1::MatrixInfo stored;
  const grpc::Status st = from.region != nullptr ? upload_from_region(s_, who_, *from.region, &stored)
                                                 : upload_from_device(s_, who_, *from.device, &stored);
  if (!st.ok()) return {st.error_code(), source + ": " + st.error_message()};
  stored_.push_back(stored.handle());
  if (pinned != nullptr) *pinned = stored.handle();
  return pin_matrix(s_, who_, field.c_str(), stored.handle(), out);
}

}  // namespace spgemmd
