#include "ops/metrics.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <CivetServer.h>
#include <civetweb.h>

#include <cstring>
#include <exception>

namespace spgemmd {

const prometheus::Histogram::BucketBoundaries& histogram_buckets() {
  // From 10 µs: the phases of a round trip (admission, hand-off, reply) take tens of microseconds.
  static const prometheus::Histogram::BucketBoundaries buckets = {
      1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05, 0.1,    0.25, 0.5,  1,      2.5,  5,     10,     30,    60};
  return buckets;
}

namespace {

// Threads answering requests, and how long a request's headers may take to
// arrive (ms): Prometheus and health probes send theirs at once.
constexpr const char* endpoint_threads = "8";
constexpr const char* request_timeout_ms = "5000";

// GET /healthz, before CivetWeb looks for a handler: "ok" while the process runs.
int answer_health(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (request == nullptr || request->local_uri == nullptr || std::strcmp(request->local_uri, "/healthz") != 0) {
    return 0;  // CivetWeb goes on: /metrics, or 404
  }
  const bool get = std::strcmp(request->request_method, "GET") == 0;
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!get && !head) {
    mg_printf(conn, "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n"
                    "Connection: close\r\n\r\nonly GET");
    return 405;
  }
  mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\n%s",
            head ? "" : "ok\n");
  return 200;
}

// "host:port" as CivetWeb's listening_ports wants it: a numeric address
// ("[...]" for IPv6) and the port, or the port alone for every address.
bool civetweb_port(const std::string& address, std::string* out, std::string* error) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    *error = "metrics address '" + address + "' is not host:port";
    return false;
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    *error = "metrics address '" + address + "': the port must be a number";
    return false;
  }
  if (host.empty()) {
    *out = port;
    return true;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *error = "metrics address '" + address + "': " + gai_strerror(rc);
    return false;
  }
  char numeric[NI_MAXHOST];
  const int rc = getnameinfo(res->ai_addr, res->ai_addrlen, numeric, sizeof numeric, nullptr, 0, NI_NUMERICHOST);
  const bool v6 = res->ai_family == AF_INET6;
  freeaddrinfo(res);
  if (rc != 0) {
    *error = "metrics address '" + address + "': " + gai_strerror(rc);
    return false;
  }
  *out = (v6 ? "[" + std::string(numeric) + "]" : std::string(numeric)) + ":" + port;
  return true;
}

}  // namespace

metrics_endpoint::~metrics_endpoint() { stop(); }

int metrics_endpoint::start(const std::string& address,
                            const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables,
                            std::string* error) {
  std::string port;
  if (!civetweb_port(address, &port, error)) return -1;
  static const CivetCallbacks callbacks = [] {
    CivetCallbacks c{};
    c.begin_request = answer_health;
    return c;
  }();
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", port, "num_threads", endpoint_threads, "request_timeout_ms",
                                 request_timeout_ms},
        &callbacks);
  } catch (const std::exception& e) {
    *error = "cannot serve metrics on '" + address + "': " + e.what();
    return -1;
  }
  for (const auto& c : collectables) exposer_->RegisterCollectable(c);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty()) {
    exposer_.reset();
    *error = "cannot serve metrics on '" + address + "'";
    return -1;
  }
  return ports.front();
}

void metrics_endpoint::stop() { exposer_.reset(); }

}  // namespace spgemmd
