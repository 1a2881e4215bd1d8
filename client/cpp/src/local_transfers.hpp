// Shared-memory transfers of a Client with a server on the same host (the
// Local service, proto/spgemm/v1/local.proto): a proof that the server reads
// this host's shared memory, a session, and two regions of the client's,
// reused from call to call and grown when too small: uploads are copied into
// one and stored by reference, results written by the server into the other
// and copied out. Private to the client library.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/grpcpp.h>

#include "spgemm/client/client.hpp"
#include "spgemm/v1/local.grpc.pb.h"

namespace spgemm::client::detail {

// A POSIX shared-memory object this process created (mode 0600), its memory
// allocated at once (a full /dev/shm fails here, not with SIGBUS later), mapped;
// unmapped and unlinked when destroyed.
class shm_object {
 public:
  explicit shm_object(std::size_t bytes);
  ~shm_object();
  shm_object(const shm_object&) = delete;
  shm_object& operator=(const shm_object&) = delete;

  const std::string& key() const { return key_; }
  std::size_t size() const { return size_; }
  char* data() const { return data_; }

 private:
  std::string key_;
  std::size_t size_ = 0;
  char* data_ = nullptr;
};

class local_transfers {
 public:
  // A context with the client's credentials metadata, and its deadline where asked.
  using context_factory = std::function<std::unique_ptr<grpc::ClientContext>(bool deadline)>;

  // Where the server proves it shares this host's shared memory (and takes
  // regions): a session with it. Else nullptr and the reason in `why_not`.
  // `cancel` (where set) ends the calls of uploads and of a result region's
  // registration as it ends the Client's other calls.
  static std::unique_ptr<local_transfers> open(const std::shared_ptr<grpc::Channel>& channel,
                                               const context_factory& context, std::shared_ptr<cancellation> cancel,
                                               std::string* why_not);
  ~local_transfers();  // unregisters the regions and ends the session

  // Copies `m` into the upload region and stores it (UploadFromRegion).
  spgemm::v1::MatrixInfo upload(const matrix_ref& m, const upload_options& options);

  // Runs `call` with a reference to the whole result region (grown to at
  // least `needed` bytes), held for the call: results it reads into that
  // region are copied out with read().
  template <typename F>
  auto with_result_region(std::int64_t needed, F&& call) {
    std::lock_guard<std::mutex> lock(results_.mu);
    ensure(results_, std::max(needed, first_result_bytes));
    return call(ref(results_, 0, static_cast<std::int64_t>(results_.object->size())));
  }
  // A matrix the server wrote into the result region (held by with_result_region).
  local_result read(const spgemm::v1::RegionMatrix& m) const;

  // Bytes a matrix of `rows` rows and `nnz` entries of `value_size` takes in
  // a region (the server's layout: each array at a multiple of 64 bytes).
  static std::int64_t region_bytes(std::int64_t rows, std::int64_t nnz, std::int64_t value_size);

 private:
  struct arena {
    explicit arena(std::string l) : label(std::move(l)) {}
    std::string label, name;
    std::unique_ptr<shm_object> object;
    std::mutex mu;  // held while a call uses it
  };
  static constexpr std::int64_t first_result_bytes = 16 << 20;

  local_transfers(std::shared_ptr<grpc::Channel> channel, context_factory context,
                  std::shared_ptr<cancellation> cancel);
  void ensure(arena& a, std::int64_t bytes);
  static spgemm::v1::RegionRef ref(const arena& a, std::int64_t offset, std::int64_t length);

  std::unique_ptr<spgemm::v1::Local::Stub> stub_;
  context_factory context_;
  std::shared_ptr<cancellation> cancel_;
  std::unique_ptr<grpc::ClientContext> session_context_;  // without a deadline: lives as long as this
  std::unique_ptr<grpc::ClientReader<spgemm::v1::SessionEvent>> session_;
  std::string session_id_;
  arena uploads_{"spgemm-cc-in"}, results_{"spgemm-cc-out"};
};

}  // namespace spgemm::client::detail
