// Which calls of a timed method are warm-ups: the first `calls`, and every
// call that starts less than min_warmup of warm-up time after the first (only
// where calls > 0). On the H100 the first method timed on a matrix, right
// after the host had spent a second loading it, ran up to 30% slow within two
// warm-up calls of half a millisecond (poisson2d5:1024: 0.70 ms first, 0.54
// ms second, same method), while the GPU's clocks came back up.
#pragma once

#include <chrono>

namespace bench {

inline constexpr std::chrono::milliseconds min_warmup{25};

class warmup {
 public:
  explicit warmup(int calls) : calls_(calls) {}
  // Call k (0, 1, ...) is about to start: is it a warm-up?
  bool is_warmup(int k) {
    const auto now = std::chrono::steady_clock::now();
    if (k == 0) first_ = now;
    return k < calls_ || (calls_ > 0 && now - first_ < min_warmup);
  }

 private:
  int calls_;
  std::chrono::steady_clock::time_point first_;
};

}  // namespace bench
