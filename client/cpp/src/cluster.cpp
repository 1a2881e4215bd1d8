// spgemm::client::Cluster: jobs spread over several spgemmd servers, and one
// product split by row panels of A across them, with failover.
#include "spgemm/client/cluster.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "wire/address.hpp"

namespace spgemm::client {

namespace v1 = spgemm::v1;
using steady = std::chrono::steady_clock;

bool is_failover_error(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:        // down, unreachable, shutting down
    case grpc::StatusCode::DEADLINE_EXCEEDED:  // hung or too slow
    case grpc::StatusCode::CANCELLED:          // cancelled by its shutdown
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::INTERNAL:           // device failure, or a stream cut short
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::NOT_FOUND:          // a handle we stored was lost (restart)
      return true;
    default:
      return false;
  }
}

std::vector<std::string> split_addresses(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

std::vector<std::int64_t> panel_bounds(const std::vector<std::int64_t>& row_offsets, int panels) {
  const std::int64_t rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  std::vector<std::int64_t> bounds{0};
  if (rows <= 0) {
    bounds.push_back(0);
    return bounds;
  }
  const std::int64_t k = std::max<std::int64_t>(1, std::min<std::int64_t>(panels, rows));
  const std::int64_t base = row_offsets.front();
  const std::int64_t nnz = row_offsets.back() - base;
  for (std::int64_t i = 1; i < k; ++i) {
    // The first row at which the panels before hold i/k of the nnz; rows
    // split evenly when A has no entries.
    std::int64_t cut;
    if (nnz > 0) {
      const std::int64_t target = base + (nnz * i + k - 1) / k;
      cut = std::lower_bound(row_offsets.begin(), row_offsets.end(), target) - row_offsets.begin();
    } else {
      cut = rows * i / k;
    }
    // Keep every panel non-empty and leave room for the ones after.
    cut = std::max(cut, bounds.back() + 1);
    cut = std::min(cut, rows - (k - i));
    bounds.push_back(cut);
  }
  bounds.push_back(rows);
  return bounds;
}

namespace {

// "dns:///host:port" or "dns://authority/host:port" -> every address the name
// resolves to ("1.2.3.4:port", "[::1]:port"); empty when it does not resolve.
std::vector<std::string> resolve_dns(const std::string& target, std::string* host_out) {
  std::string rest = target.substr(4);  // after "dns:"
  if (rest.rfind("//", 0) == 0) {
    const auto slash = rest.find('/', 2);
    rest = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
  }
  std::string host, port = std::to_string(spgemm::wire::default_port);
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return {};
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    host = colon == std::string::npos ? rest : rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (host_out) *host_out = host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (host.empty() || ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return {};
  std::vector<std::string> out;
  for (addrinfo* p = res; p; p = p->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    std::string addr;
    if (p->ai_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, buf, sizeof buf);
      addr = std::string(buf) + ":" + port;
    } else if (p->ai_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, buf, sizeof buf);
      addr = "[" + std::string(buf) + "]:" + port;
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), addr) == out.end()) out.push_back(addr);
  }
  ::freeaddrinfo(res);
  return out;
}

// A remote matrix given up without a Delete call: after a failover error the
// server is gone (or lost it), and a Delete would only wait.
void abandon(RemoteMatrix& m) {
  if (m) m.release();
}

}  // namespace

// ---------------------------------------------------------------- state

struct Cluster::state {
  struct server {
    std::string address;
    std::unique_ptr<Client> client;
    steady::time_point down_until{};
    int outstanding = 0;
  };
  cluster_options options;
  std::vector<server> servers;
  mutable std::mutex mu;
  std::size_t cursor = 0;  // round robin among ties

  bool up(const server& s, steady::time_point now) const { return now >= s.down_until; }

  // Whether the job should run again elsewhere: a failover error, and not
  // the caller's own cancellation (options.connection.cancel).
  bool fails_over(const Error& e) const {
    const auto& cancel = options.connection.cancel;
    return is_failover_error(e.code()) && !(cancel && cancel->cancelled());
  }

  // The live server with the fewest outstanding jobs, not in `exclude`, not
  // rejected by `accept`; its count goes up. npos when there is none.
  std::size_t acquire(const std::set<std::size_t>& exclude) {
    std::lock_guard<std::mutex> lock(mu);
    const auto now = steady::now();
    const std::size_t n = servers.size();
    std::size_t best = std::string::npos;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (cursor + k) % n;
      if (exclude.count(i) || !up(servers[i], now)) continue;
      if (best == std::string::npos || servers[i].outstanding < servers[best].outstanding) best = i;
    }
    if (best != std::string::npos) {
      ++servers[best].outstanding;
      cursor = (best + 1) % n;
    }
    return best;
  }

  void release(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    --servers[i].outstanding;
  }

  void mark_down(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    servers[i].down_until = steady::now() + options.retry_down_after;
  }

  // Runs attempt(i) on one live server after another, the least loaded
  // first, until one returns; returns that server. A server whose attempt
  // fails with a failover error is marked down, handed to on_failover(i) and
  // not tried again; other errors propagate. With no live server left, throws
  // the last failover error (or UNAVAILABLE).
  std::size_t with_failover(const std::function<void(std::size_t)>& attempt,
                            const std::function<void(std::size_t)>& on_failover) {
    std::set<std::size_t> tried;
    std::exception_ptr last;
    for (;;) {
      const std::size_t i = acquire(tried);
      if (i == std::string::npos) {
        if (last) std::rethrow_exception(last);
        throw Error(grpc::StatusCode::UNAVAILABLE, "no live server in the cluster");
      }
      try {
        attempt(i);
        release(i);
        return i;
      } catch (const Error& e) {
        release(i);
        if (!fails_over(e)) throw;
        mark_down(i);
        if (on_failover) on_failover(i);
        tried.insert(i);
        last = std::current_exception();
      }
    }
  }

  std::size_t live() const {
    std::lock_guard<std::mutex> lock(mu);
    const auto now = steady::now();
    return static_cast<std::size_t>(
        std::count_if(servers.begin(), servers.end(), [&](const server& s) { return up(s, now); }));
  }

  int parallel() const {
    return options.max_parallel > 0 ? options.max_parallel : static_cast<int>(2 * servers.size());
  }
};

Cluster::Cluster(const std::vector<std::string>& addresses, cluster_options options)
    : s_(std::make_unique<state>()) {
  s_->options = std::move(options);
  auto add = [&](const std::string& address, const std::string& tls_name, const std::string& lb) {
    connection_options o = s_->options.connection;
    o.address = address;
    if (!tls_name.empty() && o.tls_target_name.empty()) o.tls_target_name = tls_name;
    if (!lb.empty()) o.load_balancing_policy = lb;
    state::server s;
    s.address = spgemm::wire::with_default_port(address);
    s.client = std::make_unique<Client>(std::move(o));
    s_->servers.push_back(std::move(s));
  };
  for (const auto& a : addresses) {
    if (a.rfind("dns:", 0) == 0) {
      std::string host;
      const auto resolved = resolve_dns(a, &host);
      if (resolved.size() > 1) {
        for (const auto& r : resolved) add(r, host, "");
        continue;
      }
      // One address (or no answer yet): one channel to the name that gRPC
      // keeps resolving, spread by round_robin.
      add(a, "", "round_robin");
      continue;
    }
    add(a, "", "");
  }
  if (s_->servers.empty()) throw Error(grpc::StatusCode::INVALID_ARGUMENT, "a cluster needs at least one server address");
}

Cluster::~Cluster() = default;

std::size_t Cluster::size() const { return s_->servers.size(); }
const std::string& Cluster::address(std::size_t i) const { return s_->servers.at(i).address; }
Client& Cluster::client(std::size_t i) { return *s_->servers.at(i).client; }
bool Cluster::is_up(std::size_t i) const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->up(s_->servers.at(i), steady::now());
}
void Cluster::mark_down(std::size_t i) { s_->mark_down(i); }
int Cluster::outstanding(std::size_t i) const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->servers.at(i).outstanding;
}

void Cluster::run_erased(const std::function<void(Client&)>& job, std::size_t* server_out) {
  const std::size_t i = s_->with_failover([&](std::size_t k) { job(*s_->servers[k].client); }, nullptr);
  if (server_out) *server_out = i;
}

namespace {

// Runs body(i) for i in [0, n) on up to `threads` threads; the first
// exception stops the others taking new items and is rethrown.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mu;
  auto worker = [&] {
    for (;;) {
      if (stop) return;
      const std::size_t i = next++;
      if (i >= n) return;
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  const std::size_t t = std::max<std::size_t>(1, std::min<std::size_t>(n, static_cast<std::size_t>(std::max(threads, 1))));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < t; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

local_result Cluster::multiply(const csr_matrix& a, const csr_matrix& b, const product_options& options,
                               std::size_t* server_out) {
  return run(
      [&](Client& c) {
        RemoteMatrix ra, rb;
        try {
          ra = c.upload(a);
          if (&a != &b) rb = c.upload(b);
          return c.multiply(ra.handle(), &a == &b ? ra.handle() : rb.handle(), options);
        } catch (const Error& e) {
          if (s_->fails_over(e)) {
            abandon(ra);
            abandon(rb);
          }
          throw;
        }
      },
      server_out);
}

std::vector<local_result> Cluster::multiply_all(
    const std::vector<std::pair<const csr_matrix*, const csr_matrix*>>& jobs, const product_options& options) {
  std::vector<local_result> out(jobs.size());
  parallel_for(jobs.size(), s_->parallel(), [&](std::size_t i) {
    const csr_matrix& a = *jobs[i].first;
    const csr_matrix& b = jobs[i].second ? *jobs[i].second : a;
    out[i] = multiply(a, b, options);
  });
  return out;
}

std::vector<v1::ServerStatus> Cluster::status(std::vector<bool>* ok) {
  std::vector<v1::ServerStatus> out(size());
  if (ok) ok->assign(size(), false);
  for (std::size_t i = 0; i < size(); ++i) {
    try {
      out[i] = client(i).status();
      if (ok) (*ok)[i] = true;
    } catch (const Error&) {
    }
  }
  return out;
}

// ---------------------------------------------------------------- panels

panel_result Cluster::multiply_panels(const csr_matrix& a, const csr_matrix& b, const panel_options& options) {
  if (a.cols != b.rows) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT, "shapes do not match: A is " + std::to_string(a.rows) + "x" +
                                                        std::to_string(a.cols) + ", B is " + std::to_string(b.rows) +
                                                        "x" + std::to_string(b.cols));
  }
  if (static_cast<std::int64_t>(a.row_offsets.size()) != a.rows + 1) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT, "A's row offsets do not have rows + 1 entries");
  }
  const std::size_t n = size();
  const int want = options.panels > 0 ? options.panels : static_cast<int>(std::max<std::size_t>(1, s_->live()));
  const std::vector<std::int64_t> bounds = panel_bounds(a.row_offsets, want);
  const std::size_t panels = bounds.size() - 1;

  // B on each server: uploaded once, lazily by the first panel that needs it
  // (all at the start, in parallel, by the workers' first panels).
  struct b_copy {
    std::mutex mu;
    RemoteMatrix handle;
  };
  std::vector<b_copy> bs(n);
  product_options popts = options.product;
  popts.on_progress = nullptr;
  const matrix_ref b_ref = matrix_ref::of(b);

  std::vector<local_result> results(panels);
  panel_result out;
  out.panels.resize(panels);
  std::mutex failed_mu;
  std::set<std::size_t> failed;

  auto drop_b = [&](std::size_t i) {
    std::lock_guard<std::mutex> lock(bs[i].mu);
    abandon(bs[i].handle);
  };

  try {
    parallel_for(panels, std::min<int>(s_->parallel(), static_cast<int>(panels)), [&](std::size_t p) {
      const std::int64_t begin = bounds[p], end = bounds[p + 1];
      panel_report& rep = out.panels[p];
      rep.row_begin = begin;
      rep.row_end = end;
      rep.nnz = a.row_offsets[static_cast<std::size_t>(end)] - a.row_offsets[static_cast<std::size_t>(begin)];
      // A's rows [begin, end) in place: the codec rebases the offsets.
      matrix_ref panel_ref{end - begin,          a.cols,
                           rep.nnz,              a.row_offsets.data() + begin,
                           a.col_indices.data(), a.values.data(),
                           v1::FLOAT64};
      RemoteMatrix ra;  // deleted on the server when the panel is done
      const std::size_t server = s_->with_failover(
          [&](std::size_t i) {
            ++rep.attempts;
            Client& c = *s_->servers[i].client;
            std::string bh;
            {
              std::lock_guard<std::mutex> lock(bs[i].mu);
              if (!bs[i].handle) bs[i].handle = c.upload(b_ref);
              bh = bs[i].handle.handle();
            }
            if (options.before_attempt) options.before_attempt(p, i, rep.attempts);
            ra = c.upload(panel_ref);
            results[p] = c.multiply(ra.handle(), bh, popts);
          },
          [&](std::size_t i) {
            abandon(ra);
            drop_b(i);
            std::lock_guard<std::mutex> lock(failed_mu);
            failed.insert(i);
          });
      rep.server = server;
      rep.stats = results[p].stats;
    });
  } catch (...) {
    // Servers marked down keep nothing of ours worth a Delete; the others'
    // copies of B are deleted by the destructors.
    for (std::size_t i : failed) drop_b(i);
    throw;
  }
  for (std::size_t i : failed) drop_b(i);
  bs.clear();  // deletes B on the servers that hold it

  // Reassemble the row blocks in order, shifting their offsets.
  csr_matrix& c = out.matrix;
  c.rows = a.rows;
  c.cols = b.cols;
  std::int64_t total = 0;
  for (const auto& r : results) total += r.matrix.nnz();
  c.row_offsets.assign(1, 0);
  c.row_offsets.reserve(static_cast<std::size_t>(a.rows) + 1);
  c.col_indices.reserve(static_cast<std::size_t>(total));
  c.values.reserve(static_cast<std::size_t>(total));
  for (std::size_t p = 0; p < panels; ++p) {
    auto& m = results[p].matrix;
    const std::int64_t shift = c.nnz();
    if (m.rows != bounds[p + 1] - bounds[p]) {
      throw Error(grpc::StatusCode::INTERNAL, "panel " + std::to_string(p) + " came back with " +
                                                  std::to_string(m.rows) + " rows instead of " +
                                                  std::to_string(bounds[p + 1] - bounds[p]));
    }
    for (std::int64_t r = 1; r <= m.rows; ++r) c.row_offsets.push_back(m.row_offsets[static_cast<std::size_t>(r)] + shift);
    c.col_indices.insert(c.col_indices.end(), m.col_indices.begin(), m.col_indices.end());
    c.values.insert(c.values.end(), m.values.begin(), m.values.end());
    m = csr_matrix();
  }
  out.failed_servers.assign(failed.begin(), failed.end());
  return out;
}

}  // namespace spgemm::client
