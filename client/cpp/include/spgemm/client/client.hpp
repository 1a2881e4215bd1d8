// A thin C++ client of spgemmd: the RPCs of spgemm.v1.Spgemm as plain calls.
//
//   spgemm::client::connection_options o; o.address = "localhost:50051";
//   spgemm::client::Client c(o);
//   auto a = c.upload_file("A.mtx");                 // deleted on scope exit
//   auto r = c.multiply(a.handle(), a.handle());     // streamed back: r.matrix
//   auto k = c.multiply_kept(a.handle(), a.handle()); // stored: k.matrix.handle()
//
// Every call throws spgemm::client::Error on failure. Streamed results are
// assembled chunk by chunk as they arrive; a progress callback sees the bytes
// and rows moved so far. A Client is safe to use from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spgemm/client/error.hpp"
#include "spgemm/client/matrix_market.hpp"
#include "spgemm/client/progress.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace grpc {
class ClientContext;
}

namespace spgemm::client {

// Ends calls from another thread: a signal handler's thread, a user
// interface. Every call of a Client whose connection_options carry it ends
// with CANCELLED once cancel() has run: the calls in flight at once (the
// server cancels their jobs), later ones before they start. Deletes of
// RemoteMatrix objects are never cancelled, so the operands a call uploaded
// are still deleted as the caller's stack unwinds. Thread-safe.
class cancellation {
 public:
  void cancel();
  bool cancelled() const;

  // For the client's calls: add() registers a call about to start (throws
  // Error(CANCELLED) once cancel() has run), remove() before it is destroyed.
  void add(grpc::ClientContext* call);
  void remove(grpc::ClientContext* call);

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::vector<grpc::ClientContext*> calls_;
};

struct connection_options {
  // host:port; without a port, spgemmd's 50051.
  std::string address = "localhost:50051";
  bool tls = false;
  std::string root_cert_file;  // PEM roots for TLS; empty: the system's
  // PEM client certificate chain and its key, for a server that asks for one
  // (spgemmd --tls_client_ca); both or neither.
  std::string client_cert_file, client_key_file;
  std::string token;           // sent as "authorization: Bearer <token>" when set
  std::chrono::milliseconds deadline{0};  // per call; 0: none
  // gRPC load-balancing policy of the channel, e.g. "round_robin" for a
  // "dns:///name:port" address resolving to several servers; empty: gRPC's
  // default (pick_first). Stored matrices live on one server, so round_robin
  // suits only servers that share nothing; spgemm::client::Cluster
  // (cluster.hpp) keeps one channel per server instead.
  std::string load_balancing_policy;
  // With tls: the name the server's certificate must carry when the address
  // is not that name (e.g. an IP that a Cluster resolved); empty: the address's.
  std::string tls_target_name;
  // Ends this connection's calls from another thread; none when empty.
  std::shared_ptr<cancellation> cancel;
};

// A non-owning CSR of float or double values, for uploads from arrays.
struct matrix_ref {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const std::int64_t* row_offsets = nullptr;  // rows + 1
  const std::int32_t* col_indices = nullptr;  // nnz
  const void* values = nullptr;               // nnz
  spgemm::v1::ValueType value_type = spgemm::v1::FLOAT64;

  static matrix_ref of(const csr_matrix& m);
  static matrix_ref of(std::int64_t rows, std::int64_t cols, const std::int64_t* row_offsets,
                       const std::int32_t* col_indices, const double* values);
  static matrix_ref of(std::int64_t rows, std::int64_t cols, const std::int64_t* row_offsets,
                       const std::int32_t* col_indices, const float* values);
};

struct upload_options {
  std::string name;
  std::int64_t ttl_seconds = 0;  // 0: the server's default
  std::size_t chunk_bytes = 0;   // 0: the codec's default
  progress_callback on_progress;
};

struct product_options {
  std::string algorithm;  // empty: "auto"
  spgemm::v1::ValueType output_type = spgemm::v1::VALUE_TYPE_UNSPECIFIED;
  int priority = 0;
  std::string name;             // name of a kept result
  std::int64_t chunk_bytes = 0; // streamed result chunk size; 0: server default
  progress_callback on_progress;
};

namespace detail {
struct channel;
}

// A matrix stored on the server. Deletes it there when destroyed, unless
// release()d. Movable, not copyable. Errors in that delete are swallowed.
// The delete is never cancelled (see cancellation).
class RemoteMatrix {
 public:
  RemoteMatrix() = default;
  RemoteMatrix(std::shared_ptr<detail::channel> channel, spgemm::v1::MatrixInfo info);
  RemoteMatrix(RemoteMatrix&& other) noexcept;
  RemoteMatrix& operator=(RemoteMatrix&& other) noexcept;
  RemoteMatrix(const RemoteMatrix&) = delete;
  RemoteMatrix& operator=(const RemoteMatrix&) = delete;
  ~RemoteMatrix();

  explicit operator bool() const { return !info_.handle().empty(); }
  const std::string& handle() const { return info_.handle(); }
  // What the server reported when the matrix was stored.
  const spgemm::v1::MatrixInfo& info() const { return info_; }

  // Gives up ownership: the matrix stays on the server. Returns its handle.
  std::string release();
  // Deletes the matrix on the server now (throws on failure); returns the
  // bytes freed. The object is empty afterwards.
  std::int64_t remove();

 private:
  void drop() noexcept;  // deletes on the server, swallowing errors

  std::shared_ptr<detail::channel> channel_;
  spgemm::v1::MatrixInfo info_;
};

// A product, Galerkin product or transpose streamed back to the client.
struct local_result {
  csr_matrix matrix;
  spgemm::v1::ValueType value_type = spgemm::v1::FLOAT64;  // as sent by the server
  spgemm::v1::JobStats stats;
};

// A result kept on the server.
struct kept_result {
  RemoteMatrix matrix;
  spgemm::v1::JobStats stats;
};

class Client {
 public:
  explicit Client(connection_options options);
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  const connection_options& options() const;

  // Waits up to `timeout` for the channel to connect; false if it does not.
  bool wait_connected(std::chrono::milliseconds timeout);
  // Whether the channel is connected now (it connects lazily, on the first call).
  bool connected() const;

  RemoteMatrix upload(const matrix_ref& m, const upload_options& options = {});
  RemoteMatrix upload(const csr_matrix& m, const upload_options& options = {});
  // Reads a .mtx / .mtx.gz file and uploads it; the name defaults to the file name.
  RemoteMatrix upload_file(const std::string& path, upload_options options = {});

  local_result multiply(const std::string& a, const std::string& b, const product_options& options = {});
  kept_result multiply_kept(const std::string& a, const std::string& b,
                            const product_options& options = {});

  local_result galerkin(const std::string& p, const std::string& a,
                        spgemm::v1::GalerkinForm form = spgemm::v1::PT_A_P,
                        const product_options& options = {});
  kept_result galerkin_kept(const std::string& p, const std::string& a,
                            spgemm::v1::GalerkinForm form = spgemm::v1::PT_A_P,
                            const product_options& options = {});

  local_result transpose(const std::string& a, const product_options& options = {});
  kept_result transpose_kept(const std::string& a, const product_options& options = {});

  local_result download(const std::string& handle, const progress_callback& on_progress = {},
                        std::int64_t chunk_bytes = 0);

  std::vector<spgemm::v1::MatrixInfo> list();
  spgemm::v1::MatrixInfo describe(const std::string& handle);
  spgemm::v1::ServerStatus status();
  // Returns the bytes freed.
  std::int64_t remove(const std::string& handle);

 private:
  std::shared_ptr<detail::channel> channel_;
};

}  // namespace spgemm::client
