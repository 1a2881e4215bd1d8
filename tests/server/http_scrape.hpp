// The test suites' view of spgemmd's metrics port: plain HTTP GETs on
// loopback and the series of a Prometheus exposition.
#pragma once

#include <chrono>
#include <string>

namespace spgemmd::testing {

// A connected TCP socket to the loopback `port`, or -1.
int connect_loopback(int port);
// GET `path` on the loopback `port` with a deadline: the whole response, or
// "" on a failure or timeout.
std::string http_get(int port, const std::string& path, std::chrono::milliseconds deadline = std::chrono::seconds(5));
// The value of one series in a Prometheus exposition, or -1.
double metric(const std::string& text, const std::string& series);

}  // namespace spgemmd::testing
