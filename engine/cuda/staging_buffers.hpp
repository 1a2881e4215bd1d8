// Pinned host buffers for large host <-> device copies: device_csr copies an
// array in pieces through two of them, the DMA of one piece overlapping the
// host memcpy of the other. Cached for the next copies and shared by every
// device (portable) and thread, until trimmed once the server is quiet.
#pragma once

#include <cstddef>

namespace spgemm::cuda {

constexpr std::size_t staging_bytes = 8 << 20;  // one buffer

// A cached or new buffer of staging_bytes; nullptr where pinned memory can
// not be had (the caller copies without it).
void* acquire_staging();
// Hands a buffer back to the cache (nothing may still copy into or out of it).
void release_staging(void* p);
// Frees the cached buffers no copy holds but `keep` of them (they grow with
// the copies that ran at once).
void trim_staging(std::size_t keep);

}  // namespace spgemm::cuda
