// Arrays in device memory: device_buffer<T> owns one, allocated from a
// memory resource on a stream and freed (stream-ordered) through it on the
// stream it is bound to; device_span<T> is a non-owning view (a buffer's
// whole array, or part of one allocation that holds several: array_carver).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/memory_resource.hpp"

namespace spgemm::cuda {

template <typename T>
class device_span {
 public:
  device_span() = default;
  device_span(T* data, std::size_t count) : data_(data), count_(count) {}

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  bool empty() const { return count_ == 0; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

template <typename T>
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(memory_resource& memory, std::size_t count, cudaStream_t stream)
      : memory_(&memory), stream_(stream), count_(count) {
    data_ = static_cast<T*>(memory.allocate(count * sizeof(T), stream));
  }
  ~device_buffer() { reset(); }

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
    if (memory_ != nullptr) memory_->deallocate(data_, bytes(), stream_);
    memory_ = nullptr;
    data_ = nullptr;
    count_ = 0;
  }

  // The stream the eventual free is ordered on.
  void bind_stream(cudaStream_t stream) { stream_ = stream; }
  // The resource the eventual free goes through: a job's result outlives the
  // job's resources, so it is handed to the device's (their upstream).
  void bind_resource(memory_resource& memory) {
    if (memory_ != nullptr) memory_ = &memory;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  bool empty() const { return count_ == 0; }

 private:
  void swap(device_buffer& other) noexcept {
    std::swap(memory_, other.memory_);
    std::swap(stream_, other.stream_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }

  memory_resource* memory_ = nullptr;
  cudaStream_t stream_ = nullptr;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Consecutive arrays of one allocation, handed out in order as views; the
// caller orders them so that each stays aligned.
class array_carver {
 public:
  explicit array_carver(void* memory) : at_(static_cast<unsigned char*>(memory)) {}

  template <typename U>
  device_span<U> next(std::size_t count) {
    const device_span<U> view(reinterpret_cast<U*>(at_), count);
    at_ += count * sizeof(U);
    return view;
  }

 private:
  unsigned char* at_;
};

}  // namespace spgemm::cuda
