// Several spgemmd servers used as one: independent jobs spread over them, and
// one product split by row panels of A across them.
//
//   spgemm::client::Cluster cluster({"gpu1:50051", "gpu2:50051", "gpu3:50051"});
//   auto results = cluster.multiply_all({{&A1, &B1}, {&A2, &B2}});  // spread
//   auto c = cluster.multiply_panels(A, B);                        // one big product
//
// Addresses are host:port (one server each; port 50051 where none is given),
// or "dns:///name:port": the name is resolved and every address it gives
// becomes one server (a headless Kubernetes Service, say). Matrices live on
// the server that stored them, so a Cluster keeps one channel per server; see
// docs/scaling.md.
//
// Failover: a call that fails with UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED
// (other than by the connection template's own cancellation), ABORTED,
// INTERNAL, UNKNOWN, or NOT_FOUND on a handle the cluster itself
// stored (the server lost it, e.g. it restarted) marks that server down for
// `retry_down_after` and runs the job (or panel) again on another live server.
// Other errors (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) are the input's
// and are thrown at once. When no server is left, the last error is thrown.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spgemm/client/client.hpp"

namespace spgemm::client {

struct cluster_options {
  // Template of every server's connection (tls, token, deadline); its address
  // is ignored.
  connection_options connection;
  // A server marked down is tried again after this long.
  std::chrono::milliseconds retry_down_after{30000};
  // Jobs or panels in flight at once over the whole cluster; 0: 2 per server.
  int max_parallel = 0;
};

// Whether an error of a call to one server is that server's fault (the job
// should run elsewhere) rather than the input's.
bool is_failover_error(grpc::StatusCode code);

// Splits a comma-separated list of addresses ("a:1,b:2"), trimming blanks.
std::vector<std::string> split_addresses(const std::string& list);

// What multiply_panels did with one panel.
struct panel_report {
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  std::int64_t nnz = 0;          // of A's rows in the panel
  std::size_t server = 0;        // index of the server that computed it
  int attempts = 0;              // 1 when no failover was needed
  spgemm::v1::JobStats stats;
};

struct panel_options {
  int panels = 0;  // 0: one per live server
  product_options product;  // algorithm, output type, priority (on_progress unused)
  // Test hook: called in the worker thread just before a panel's attempt is
  // sent to a server (panel index, server index, attempt number from 1).
  std::function<void(std::size_t, std::size_t, int)> before_attempt;
};

struct panel_result {
  csr_matrix matrix;
  std::vector<panel_report> panels;
  std::vector<std::size_t> failed_servers;  // marked down during the product
};

// Row boundaries [0 = b0 < b1 < ... < bk = rows] of at most `panels` panels of
// A balanced by nnz (fewer panels when A has fewer rows; one for no rows).
std::vector<std::int64_t> panel_bounds(const std::vector<std::int64_t>& row_offsets, int panels);

class Cluster {
 public:
  // One server per address (dns:/// names expand to every resolved address).
  explicit Cluster(const std::vector<std::string>& addresses, cluster_options options = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  std::size_t size() const;
  const std::string& address(std::size_t server) const;
  Client& client(std::size_t server);
  bool is_up(std::size_t server) const;
  void mark_down(std::size_t server);
  // Jobs in flight on a server now (through this Cluster).
  int outstanding(std::size_t server) const;

  // Runs `job` on the live server with the fewest outstanding jobs (round
  // robin on ties); on a failover error, again on another one. The job must
  // be self-contained (upload what it needs): it may run more than once.
  // Returns what it returns; `server_out` gets the server that ran it.
  template <typename F>
  auto run(F&& job, std::size_t* server_out = nullptr) -> decltype(job(std::declval<Client&>())) {
    using R = decltype(job(std::declval<Client&>()));
    if constexpr (std::is_void_v<R>) {
      run_erased([&](Client& c) { job(c); }, server_out);
    } else {
      std::optional<R> result;
      run_erased([&](Client& c) { result.emplace(job(c)); }, server_out);
      return std::move(*result);
    }
  }

  // C = A * B on one server (operands uploaded for the call, deleted after).
  local_result multiply(const csr_matrix& a, const csr_matrix& b, const product_options& options = {},
                        std::size_t* server_out = nullptr);

  // Independent products spread over the servers, in parallel; results in
  // the order of `jobs`. Throws the first non-failover error.
  std::vector<local_result> multiply_all(const std::vector<std::pair<const csr_matrix*, const csr_matrix*>>& jobs,
                                         const product_options& options = {});

  // C = A * B split by row panels of A across the servers: B is uploaded to
  // every live server, the panels multiplied in parallel, and their row
  // blocks reassembled in order. Handles it stored are deleted at the end.
  panel_result multiply_panels(const csr_matrix& a, const csr_matrix& b, const panel_options& options = {});

  // Status of every server; a down or unreachable one gets an empty status
  // and `ok[i] = false`.
  std::vector<spgemm::v1::ServerStatus> status(std::vector<bool>* ok = nullptr);

 private:
  struct state;
  void run_erased(const std::function<void(Client&)>& job, std::size_t* server_out);
  std::unique_ptr<state> s_;
};

}  // namespace spgemm::client
