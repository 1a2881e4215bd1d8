#include "rpc/region_operands.hpp"

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

grpc::Status request_operands::pin(const std::string& field, const std::string& handle,
                                   const v1::RegionUploadRequest* region, core::pin* out, std::string* pinned) {
  if (region == nullptr) {
    if (pinned != nullptr) *pinned = handle;
    return pin_matrix(s_, who_, field.c_str(), handle, out);
  }
  if (!handle.empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, field + ": a handle or " + field + "_region, not both"};
  }
  if (grpc::Status st = local_gate(s_, ctx_, local_feature::shared_memory); !st.ok()) return st;
  v1::MatrixInfo stored;
  if (const grpc::Status st = upload_from_region(s_, who_, *region, &stored); !st.ok()) {
    return {st.error_code(), field + "_region: " + st.error_message()};
  }
  stored_.push_back(stored.handle());
  if (pinned != nullptr) *pinned = stored.handle();
  return pin_matrix(s_, who_, field.c_str(), stored.handle(), out);
}

}  // namespace spgemmd
