#include "cuda/read_back.hpp"

namespace spgemm::cuda {
namespace {

// Freed when its thread ends (errors ignored: at process exit the runtime
// may be gone first).
class pinned_buffer {
 public:
  pinned_buffer() = default;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  ~pinned_buffer() {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
  }

  void* at_least(std::size_t bytes) {
    if (bytes > bytes_) {
      if (data_ != nullptr) (void)cudaFreeHost(data_);
      data_ = nullptr;
      bytes_ = 0;
      // Portable: readable by copies on any device's streams.
      SPGEMM_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable));
      bytes_ = bytes;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace

void* pinned_staging(std::size_t bytes) {
  constexpr std::size_t least = 4096;
  thread_local pinned_buffer buffer;
  return buffer.at_least(bytes < least ? least : bytes);
}

}  // namespace spgemm::cuda
