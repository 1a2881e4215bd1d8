// The GPU backend's matrix_writer: an upload's rows copied to the device as
// they arrive, into arrays allocated for the whole matrix when it is opened.
#include "cuda/cuda_check.hpp"
#include "gpu/cuda_backend.hpp"

namespace spgemm::gpu {
namespace {

template <typename T>
class cuda_matrix_writer final : public matrix_writer {
 public:
  cuda_matrix_writer(std::shared_ptr<cuda::device_context> context, const matrix_info& info,
                     const host_csr_arrays& arrays)
      : matrix_writer(info, arrays), context_(std::move(context)), stream_(context_->streams.acquire()) {
    cuda::device_guard guard(context_->device);
    m_ = cuda::allocate_csr<T>(info.rows, info.cols, info.nnz, context_->memory, stream_.get());
  }

  std::shared_ptr<stored_matrix> finish() override {
    require_complete();
    return std::make_shared<cuda_stored_matrix>(context_, cuda::any_device_csr(std::move(m_)));
  }

 private:
  // Called from whichever thread writes: each copy sets the device.
  void copy(std::int64_t row_begin, std::int64_t row_end) override {
    cuda::device_guard guard(context_->device);
    cuda::upload_rows(m_, arrays_.row_offsets, arrays_.col_indices, static_cast<const T*>(arrays_.values),
                      row_begin, row_end, stream_.get());
  }

  std::shared_ptr<cuda::device_context> context_;
  cuda::stream_pool::lease stream_;
  cuda::device_csr<T> m_;  // freed on stream_ where the upload fails: declared after it
};

}  // namespace

std::unique_ptr<matrix_writer> cuda_backend::open_writer(const matrix_info& info, const host_csr_arrays& arrays) {
  if (info.type == value_type::f32) return std::make_unique<cuda_matrix_writer<float>>(context_, info, arrays);
  return std::make_unique<cuda_matrix_writer<double>>(context_, info, arrays);
}

}  // namespace spgemm::gpu
