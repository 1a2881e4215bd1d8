// Transparent huge pages for large host arrays written for the first time:
// with 4 KiB pages the first write of a large array costs a page fault per
// 4 KiB, with 2 MiB pages one per 2 MiB.
#pragma once

#include <cstddef>
#include <vector>

namespace spgemm {

// Asks for huge pages over the 2 MiB pages that [p, p + bytes) covers whole
// (Linux; a no-op elsewhere, and the kernel ignores it where THP is off).
void advise_huge_pages(void* p, std::size_t bytes);

// Room for n elements in `v`, in huge pages where the system gives them.
// Call it before the array is written.
template <typename T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace spgemm
