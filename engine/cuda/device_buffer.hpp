// device_buffer<T>: an owning array in device memory, allocated from a
// device_allocator on a stream and freed (stream-ordered) on the stream it
// is bound to. Optionally reports to a job_meter while it is attached.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/device_context.hpp"

namespace spgemm::cuda {

template <typename T>
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(device_allocator& allocator, std::size_t count, cudaStream_t stream,
                job_meter* meter = nullptr)
      : allocator_(&allocator), stream_(stream), meter_(meter), count_(count) {
    data_ = static_cast<T*>(allocator.allocate(count * sizeof(T), stream));
    if (meter_ != nullptr) meter_->add(bytes());
  }
  ~device_buffer() { reset(); }

  // `count` elements at `data`, inside an allocation another buffer owns
  // (several arrays in one allocation: see device_csr::storage). Frees and
  // counts nothing.
  static device_buffer within(T* data, std::size_t count) {
    device_buffer view;
    view.data_ = data;
    view.count_ = count;
    return view;
  }

  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept { swap(other); }
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }

  // Frees now (stream-ordered on the bound stream).
  void reset() noexcept {
    if (allocator_ != nullptr && data_ != nullptr) {
      allocator_->deallocate(data_, bytes(), stream_);
      if (meter_ != nullptr) meter_->remove(bytes());
    }
    data_ = nullptr;
    count_ = 0;
    meter_ = nullptr;
  }

  // The stream the eventual free is ordered on.
  void bind_stream(cudaStream_t stream) { stream_ = stream; }
  // Stops reporting to the job meter (the buffer outlives the job).
  void detach_meter() { meter_ = nullptr; }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  bool empty() const { return count_ == 0; }

 private:
  void swap(device_buffer& other) noexcept {
    std::swap(allocator_, other.allocator_);
    std::swap(stream_, other.stream_);
    std::swap(meter_, other.meter_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }

  device_allocator* allocator_ = nullptr;
  cudaStream_t stream_ = nullptr;
  job_meter* meter_ = nullptr;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Consecutive arrays of one allocation, handed out in order as views
// (device_buffer::within); the caller orders them so that each stays aligned.
class array_carver {
 public:
  explicit array_carver(void* memory) : at_(static_cast<unsigned char*>(memory)) {}

  template <typename U>
  device_buffer<U> next(std::size_t count) {
    auto view = device_buffer<U>::within(reinterpret_cast<U*>(at_), count);
    at_ += count * sizeof(U);
    return view;
  }

 private:
  unsigned char* at_;
};

}  // namespace spgemm::cuda
