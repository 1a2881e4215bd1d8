// The end of an upload, whichever way its rows arrived (chunks: upload_call;
// shared-memory regions: region_upload): the assembled arrays stored in the
// cache as a matrix, and handed back to the spare arrays where the cache did
// not keep them.
#pragma once

#include <string>

#include "core/upload.hpp"
#include "rpc/spare_arrays.hpp"
#include "wire/chunk_codec.hpp"

namespace spgemmd {

// The arrays an upload arrives into: reserved for the whole matrix by the
// assembler, so they stay where they are while it fills them (core::upload
// copies them to a device as they fill).
spgemm::host_csr_arrays host_arrays(spgemm::wire::chunk_assembler& a);

// Stores the matrix `a` assembled (its finish() was OK) through `up` (as its
// caller's); the assembler's arrays are taken, and go back to `spares` where
// the cache did not keep them. Throws what the cache throws.
core::entry_info store_upload(spare_arrays& spares, spgemm::wire::chunk_assembler& a, core::upload& up);

}  // namespace spgemmd
