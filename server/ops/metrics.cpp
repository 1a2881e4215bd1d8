#include "ops/metrics.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace spgemmd {

std::string labels(std::initializer_list<std::pair<const char*, std::string>> kv) {
  std::string out;
  for (const auto& [k, v] : kv) {
    if (!out.empty()) out += ',';
    out += k;
    out += "=\"";
    for (char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') { out += "\\n"; continue; }
      out += c;
    }
    out += '"';
  }
  return out;
}

const std::vector<double>& histogram_buckets() {
  // From 10 µs: the phases of a round trip (admission, hand-off, reply) take tens of microseconds.
  static const std::vector<double> buckets = {1e-5,  2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                              0.05,  0.1,    0.25, 0.5,  1,      2.5,  5,     10,     30,    60};
  return buckets;
}

namespace {

std::string format_value(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string series(const std::string& name, const std::string& label_set) {
  return label_set.empty() ? name : name + "{" + label_set + "}";
}

}  // namespace

void metrics_registry::describe(const std::string& name, const std::string& type, const std::string& help) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& f = families_[name];
  f.type = type;
  f.help = help;
}

void metrics_registry::add(const std::string& name, const std::string& label_set, double delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  families_[name].values[label_set] += delta;
}

double metrics_registry::counter_value(const std::string& name, const std::string& label_set) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto v = f->second.values.find(label_set);
  return v == f->second.values.end() ? 0 : v->second;
}

void metrics_registry::observe(const std::string& name, const std::string& label_set, double seconds) {
  const auto& buckets = histogram_buckets();
  std::lock_guard<std::mutex> lock(mutex_);
  auto& h = families_[name].hists[label_set];
  if (h.counts.empty()) h.counts.assign(buckets.size(), 0);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (seconds <= buckets[i]) {
      h.counts[i] += 1;
      break;
    }
  }
  h.sum += seconds;
  h.count += 1;
}

void metrics_registry::set_collector(std::function<void(const gauge_setter&)> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  collector_ = std::move(fn);
}

std::string metrics_registry::render() {
  std::function<void(const gauge_setter&)> collector;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    collector = collector_;
  }
  std::map<std::string, std::map<std::string, double>> gauges;
  if (collector) {
    collector([&](const std::string& name, const std::string& label_set, double value) {
      gauges[name][label_set] = value;
    });
  }
  const auto& buckets = histogram_buckets();
  std::string out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [name, values] : gauges) families_[name].values = values;
  for (const auto& [name, f] : families_) {
    if (!f.help.empty()) out += "# HELP " + name + " " + f.help + "\n";
    if (!f.type.empty()) out += "# TYPE " + name + " " + f.type + "\n";
    for (const auto& [ls, v] : f.values) out += series(name, ls) + " " + format_value(v) + "\n";
    for (const auto& [ls, h] : f.hists) {
      double cumulative = 0;
      const std::string sep = ls.empty() ? "" : ",";
      for (std::size_t i = 0; i < buckets.size(); ++i) {
        cumulative += h.counts[i];
        out += name + "_bucket{" + ls + sep + "le=\"" + format_value(buckets[i]) + "\"} " +
               format_value(cumulative) + "\n";
      }
      out += name + "_bucket{" + ls + sep + "le=\"+Inf\"} " + format_value(h.count) + "\n";
      out += series(name + "_sum", ls) + " " + format_value(h.sum) + "\n";
      out += series(name + "_count", ls) + " " + format_value(h.count) + "\n";
    }
  }
  return out;
}

int metrics_http_server::start(const std::string& address, std::string* error) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    *error = "metrics address '" + address + "' is not host:port";
    return -1;
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *error = "metrics address '" + address + "': " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 16) == 0) break;
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) {
    *error = "cannot listen on metrics address '" + address + "': " + std::strerror(errno);
    return -1;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  int bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                               : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listen_fd_ = fd;
  stop_ = false;
  thread_ = std::thread([this] { serve(); });
  return bound_port;
}

void metrics_http_server::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

void metrics_http_server::serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    handle(fd);
    ::close(fd);
  }
}

void metrics_http_server::handle(int fd) {
  std::string request;
  char buf[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<std::size_t>(n));
  }
  const auto line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  std::string status = "200 OK", type = "text/plain; version=0.0.4; charset=utf-8", body;
  const bool is_get = line.rfind("GET ", 0) == 0;
  const bool is_head = line.rfind("HEAD ", 0) == 0;
  const std::size_t path_begin = line.find(' ') + 1;
  std::string path = line.substr(path_begin, line.find(' ', path_begin) - path_begin);
  if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
  if (!is_get && !is_head) {
    status = "405 Method Not Allowed";
    type = "text/plain";
    body = "only GET\n";
  } else if (path == "/metrics") {
    body = registry_.render();
  } else if (path == "/healthz") {
    type = "text/plain";
    body = "ok\n";
  } else {
    status = "404 Not Found";
    type = "text/plain";
    body = "see /metrics\n";
  }
  std::string response = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!is_head) response += body;
  std::size_t sent = 0;
  while (sent < response.size()) {
    ssize_t n = ::send(fd, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace spgemmd
