// Copies of large arrays into and out of the shared-memory regions, split
// across a few threads: one thread moves a few GB/s, memory several times
// that, and the page faults of fresh memory run in parallel too. Private to
// the client library.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace spgemm::client::detail {

// A copy takes a thread per this much, up to copy_threads(): smaller ones stay on the calling thread.
constexpr std::size_t copy_piece_bytes = std::size_t{4} << 20;

// Threads to copy `bytes` with: min(hardware threads, 8) at most.
inline std::size_t copy_threads(std::size_t bytes) {
  const std::size_t most = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp<std::size_t>(bytes / copy_piece_bytes, 1, most);
}

// f(begin, end) on `threads` contiguous pieces of [0, n), the first on the calling thread.
template <typename F>
void for_each_piece(std::size_t n, std::size_t threads, const F& f) {
  std::vector<std::thread> helpers;
  for (std::size_t i = 1; i < threads; ++i) {
    helpers.emplace_back([&f, n, i, threads] { f(n * i / threads, n * (i + 1) / threads); });
  }
  f(0, n / threads);
  for (auto& h : helpers) h.join();
}

// memcpy(to, from, bytes), split across threads when large.
inline void parallel_copy(void* to, const void* from, std::size_t bytes) {
  for_each_piece(bytes, copy_threads(bytes), [&](std::size_t begin, std::size_t end) {
    if (end > begin) std::memcpy(static_cast<char*>(to) + begin, static_cast<const char*>(from) + begin, end - begin);
  });
}

// Faults in the pages of [p, p + bytes) writable (MADV_POPULATE_WRITE, Linux
// 5.14+), without changing their contents; where the kernel cannot, the first
// writes fault them in instead.
inline void map_pages(void* p, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t page = 4096;
  const auto begin = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Empties `v` and fills it with the n elements at `from`, converted to T.
//
// A std::vector's elements come into being only through its own calls on this
// thread (insert() copies them, resize() zero-fills them; a vector of another
// allocator would break the users of csr_matrix). So for large arrays helpers
// fault the pages in first (in huge pages where the kernel gives them), and
// this thread takes the pieces in order: while a helper waits for work, it
// zero-fills the next piece (about as fast as copying it on one core) and
// hands it over to be copied; else it copies the piece itself. A piece is
// written twice only where a core would otherwise idle.
template <typename T, typename From>
void copy_to_vector(std::vector<T>& v, const From* from, std::size_t n) {
  v.clear();
  if (v.capacity() < n) {
    v = std::vector<T>();  // the old memory goes before the new comes
    v.reserve(n);
  }
  const std::size_t threads = copy_threads(n * sizeof(T));
  if (threads == 1) {
    v.insert(v.end(), from, from + n);
    return;
  }
  T* const to = v.data();
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto first = (reinterpret_cast<std::uintptr_t>(to) + huge - 1) & ~(huge - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(to + n)) & ~(huge - 1);
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
  const std::size_t pieces = 4 * threads, helpers = threads - 1;
  auto at = [&](std::size_t i) { return n * i / pieces; };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<bool> mapped(pieces);
  std::vector<std::size_t> handed;  // grown pieces for the helpers to copy
  std::size_t waiting = 0;          // helpers waiting for one
  bool done = false;
  std::vector<std::thread> running;
  for (std::size_t h = 0; h < helpers; ++h) {
    running.emplace_back([&, h] {
      for (std::size_t i = h; i < pieces; i += helpers) {
        map_pages(to + at(i), (at(i + 1) - at(i)) * sizeof(T));
        std::lock_guard<std::mutex> lock(mu);
        mapped[i] = true;
        cv.notify_all();
      }
      for (;;) {
        std::unique_lock<std::mutex> lock(mu);
        ++waiting;
        cv.wait(lock, [&] { return !handed.empty() || done; });
        --waiting;
        if (handed.empty()) return;
        const std::size_t i = handed.back();
        handed.pop_back();
        lock.unlock();
        std::copy(from + at(i), from + at(i + 1), to + at(i));
      }
    });
  }
  for (std::size_t i = 0; i < pieces; ++i) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return mapped[i]; });
    const bool hand = waiting > handed.size();
    lock.unlock();
    if (!hand) {
      v.insert(v.end(), from + at(i), from + at(i + 1));
      continue;
    }
    // Within the reserved capacity resize() only appends: the elements the
    // helpers write stay where they are.
    v.resize(at(i + 1));
    lock.lock();
    handed.push_back(i);
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  }
  for (auto& h : running) h.join();
}

}  // namespace spgemm::client::detail
