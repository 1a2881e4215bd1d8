// Makes a device current on the calling thread for the lifetime of the
// guard, restoring the previous one.
#pragma once

namespace spgemm::cuda {

class device_guard {
 public:
  explicit device_guard(int device);
  ~device_guard();
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
  int device_ = -1;
};

}  // namespace spgemm::cuda
