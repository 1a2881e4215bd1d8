// spgemmd: the SpGEMM service. Opens the backends, warms them up, serves
// spgemm.v1.Spgemm (plus grpc.health.v1 and reflection) on --listen and
// Prometheus metrics on --metrics_listen, and shuts down gracefully on
// SIGTERM/SIGINT. Settings: spgemmd --help, or docs/service.md.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "ops/config.hpp"
#include "ops/log.hpp"
#include "ops/metrics.hpp"
#include "ops/service_metrics.hpp"
#include "rpc/service.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"

#ifndef SPGEMMD_VERSION
#define SPGEMMD_VERSION "0.0.0"
#endif

namespace {

using namespace spgemmd;

bool write_port_file(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!(out << port << "\n")) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::size_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : (8ull << 30);
}

// A tiny product on every backend, so the first real job pays no start-up cost.
void warm_up(spgemm::backend& b) {
  spgemm::csr_matrix<double> m;
  m.rows = m.cols = 2;
  m.row_offsets = {0, 1, 2};
  m.col_indices = {0, 1};
  m.values = {1.0, 2.0};
  auto s = b.store(spgemm::any_csr(m));
  auto c = b.multiply(*s, *s, {});
  (void)b.fetch(*c);
  b.reset_peak();
}

[[noreturn]] void die(const std::string& message) {
  log_event("error", "startup_failed", {{"message", message}});
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  // Streams allocate and free megabyte buffers all the time (protobuf strings,
  // gRPC slices). With glibc's defaults each comes from fresh mmap'd or trimmed
  // pages: a page fault and a zeroed page per 4 KiB, about a fifth of the CPU
  // time of an upload. Keep freed memory for reuse instead; arrays of 32 MiB
  // and up still map their own pages and go back to the OS when freed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Block the shutdown signals before any thread starts; main waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const config cfg = parse_config(argc, argv);
  set_log_format(cfg.log_format == "json" ? log_format::json : log_format::text);

  std::vector<std::shared_ptr<spgemm::backend>> backends;
  try {
    if (cfg.backend == "cpu" || spgemm::cuda_device_count() == 0) {
      for (int i = 0; i < cfg.cpu_backends; ++i) backends.push_back(spgemm::make_cpu_backend(cfg.cpu_threads, i));
    } else if (cfg.devices.empty()) {
      backends = spgemm::open_default_backends();
    } else {
      backends = spgemm::open_cuda_backends(cfg.devices);
    }
  } catch (const std::exception& e) {
    die(std::string("cannot open the backends: ") + e.what());
  }
  if (backends.empty()) die("no backend");

  std::vector<std::size_t> budgets;
  for (const auto& b : backends) {
    const spgemm::backend_memory mem = b->memory();
    std::size_t budget = static_cast<std::size_t>(cfg.device_budget_bytes);
    if (budget == 0) {
      const std::size_t base = b->is_gpu() ? mem.free_bytes : (mem.total_bytes ? mem.total_bytes : physical_memory());
      budget = static_cast<std::size_t>(cfg.device_budget_fraction * static_cast<double>(base));
    }
    budgets.push_back(budget);
    log_event("info", "backend", {{"device", b->name()}, {"description", b->description()},
                                  {"budget_bytes", static_cast<int64_t>(budget)},
                                  {"total_bytes", static_cast<int64_t>(mem.total_bytes)},
                                  {"free_bytes", static_cast<int64_t>(mem.free_bytes)}});
  }
  const std::size_t host_budget = cfg.host_budget_bytes > 0 ? static_cast<std::size_t>(cfg.host_budget_bytes)
                                                            : physical_memory() / 4;

  if (cfg.warmup) {
    for (const auto& b : backends) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        warm_up(*b);
      } catch (const std::exception& e) {
        die("warm-up of " + b->name() + " failed: " + e.what());
      }
      log_event("info", "warmup", {{"device", b->name()},
                                   {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()}});
    }
  }

  core::matrix_cache cache(backends, budgets, host_budget, cfg.default_ttl_seconds);
  core::scheduler sched(cache, cfg.max_queue, cfg.workers);
  cache.set_on_freed([&sched] { sched.poke(); });
  cache.start_sweeper(std::chrono::milliseconds(1000));

  metrics_registry registry;
  service_metrics metrics(registry, cache, sched);
  service_state state(cache, sched, metrics, cfg, SPGEMMD_VERSION);

  metrics_http_server metrics_server(registry);
  if (!cfg.metrics_listen.empty()) {
    std::string error;
    const int port = metrics_server.start(cfg.metrics_listen, &error);
    if (port < 0) die(error);
    if (!cfg.metrics_port_file.empty() && !write_port_file(cfg.metrics_port_file, port)) {
      die("cannot write " + cfg.metrics_port_file);
    }
    log_event("info", "metrics_listening", {{"address", cfg.metrics_listen}, {"port", port}});
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  spgemm_service service(state);
  grpc::ServerBuilder builder;
  // gRPC binds with SO_REUSEPORT by default: a second spgemmd on a taken port
  // would start and split the connections with the first (handles appearing
  // and vanishing at random). Without it the bind fails and we say so.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int port = 0;
  builder.AddListeningPort(cfg.listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    die("cannot listen on " + cfg.listen + ": the port is taken (another spgemmd? choose another with "
        "--listen=HOST:PORT) or the address is not one of this host's");
  }
  if (!cfg.port_file.empty() && !write_port_file(cfg.port_file, port)) die("cannot write " + cfg.port_file);
  log_event("info", "serving", {{"address", cfg.listen}, {"port", port}, {"version", SPGEMMD_VERSION},
                                {"devices", static_cast<int64_t>(backends.size())}});

  int sig = 0;
  sigwait(&signals, &sig);
  log_event("info", "shutdown", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}, {"grace_seconds", cfg.grace_seconds}});

  // Stop accepting (new calls get UNAVAILABLE), let in-flight calls finish
  // within the grace period, then cancel them (their jobs stop at the next
  // phase boundary and free what they hold).
  state.shutting_down = true;
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(false);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(cfg.grace_seconds * 1000));
  server->Shutdown(deadline);
  server->Wait();
  sched.stop();
  metrics_server.stop();
  log_event("info", "stopped", {});
  return 0;
}
