// spgemmd: the SpGEMM service. Opens the backends, warms them up, serves
// spgemm.v1.Spgemm, Graph, Values, Amg and, for clients on this host, Local
// (plus grpc.health.v1 and reflection) on --listen, over TLS and to callers
// with tokens where configured, and on --unix_socket, and Prometheus metrics
// on --metrics_listen; reads its tokens again on SIGHUP and shuts down
// gracefully on SIGTERM/SIGINT. Settings: spgemmd --help, or docs/service.md.
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

#include "auth/authenticator.hpp"
#include "auth/exposure.hpp"
#include "auth/tls.hpp"
#include "core/matrix_cache.hpp"
#include "core/scheduler.hpp"
#include "ops/config.hpp"
#include "ops/idle_release.hpp"
#include "ops/log.hpp"
#include "ops/metrics.hpp"
#include "ops/service_metrics.hpp"
#include "rpc/amg_service.hpp"
#include "rpc/graph_service.hpp"
#include "rpc/local_service.hpp"
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

// A setting that can not be served, as config.cpp reports a bad value.
[[noreturn]] void refuse(const std::string& message) {
  std::fprintf(stderr, "spgemmd: %s\n", message.c_str());
  std::exit(2);
}

// The spill directory of --spill_dir, its budget 90% of the free space there
// unless given.
std::shared_ptr<core::spill_space> open_spill(const config& cfg) {
  std::size_t budget = static_cast<std::size_t>(cfg.spill_budget_bytes);
  if (budget == 0) {
    struct statvfs fs {};
    if (statvfs(cfg.spill_dir.c_str(), &fs) != 0) refuse("--spill_dir '" + cfg.spill_dir + "' cannot be read");
    budget = static_cast<std::size_t>(0.9 * static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize));
  }
  try {
    auto space = std::make_shared<core::spill_space>(cfg.spill_dir, budget);
    log_event("info", "spill", {{"dir", cfg.spill_dir}, {"budget_bytes", static_cast<int64_t>(budget)}});
    return space;
  } catch (const std::exception& e) {
    refuse(e.what());
  }
}

// SIGHUP: the tokens file again. A bad file leaves the tokens before it in place.
void reload_tokens(auth::authenticator& auth) {
  if (!auth.needs_tokens()) {
    log_event("info", "sighup", {{"message", "no --tokens_file to read again"}});
    return;
  }
  try {
    log_event("info", "tokens_reloaded", {{"tokens", static_cast<int64_t>(auth.reload())}});
  } catch (const std::exception& e) {
    log_event("error", "tokens_reload_failed", {{"message", std::string(e.what()) + "; the tokens before it stay"}});
  }
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
  // One arena: malloc_trim, once the server goes quiet (ops/idle_release),
  // reaches all the memory freed; the top of each further arena it would not,
  // and after a load they held hundreds of MB (a 10 s, 8-client load on the
  // CPU backend: 17 MB -> 230 MB, 19 MB with one arena). MALLOC_ARENA_MAX
  // in the environment overrides it.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  // Block the shutdown and reload signals before any thread starts; main waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const config cfg = parse_config(argc, argv);
  set_log_format(cfg.log_format == "json" ? log_format::json : log_format::text);

  // Who may call, and over what, before anything starts (docs/configuration.md#security).
  // (Without --listen only the Unix socket serves: this host's.)
  const std::string refusal =
      cfg.listen.empty() ? ""
                         : auth::exposure_refusal(cfg.listen, !cfg.tls_cert.empty(), !cfg.tokens_file.empty(),
                                                  cfg.insecure);
  if (!refusal.empty()) refuse(refusal);
  std::unique_ptr<auth::authenticator> authenticator;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  try {
    authenticator = cfg.tokens_file.empty() ? std::make_unique<auth::authenticator>()
                                            : std::make_unique<auth::authenticator>(cfg.tokens_file);
    credentials = auth::server_credentials({cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca});
  } catch (const std::exception& e) {
    refuse(e.what());
  }
  if (!cfg.listen.empty() && !auth::is_local_address(cfg.listen) &&
      (cfg.tls_cert.empty() || cfg.tokens_file.empty())) {
    log_event("warn", "insecure", {{"address", cfg.listen},
                                   {"message", "--insecure: serving an address other hosts can reach without " +
                                                   std::string(cfg.tls_cert.empty() ? "TLS" : "tokens")}});
  }

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
  if (!cfg.spill_dir.empty()) cache.set_spill(open_spill(cfg));
  core::scheduler sched(cache, cfg.max_queue, cfg.workers);
  cache.set_on_freed([&sched] { sched.poke(); });
  cache.start_sweeper(std::chrono::milliseconds(1000));

  service_metrics metrics(cache, sched);
  service_state state(cache, sched, metrics, *authenticator, cfg, SPGEMMD_VERSION);
  // Once quiet, the spare upload arrays, the estimates of products of deleted
  // matrices, the devices' pools beyond --device_keep_bytes and the
  // allocator's free pages go back to the OS and the driver.
  idle_release quiet_release(
      std::chrono::milliseconds(1000), [&state] { return state.calls.ended(); },
      [&state] { return state.calls.running(); },
      [&state, &cache, keep = static_cast<std::size_t>(cfg.device_keep_bytes)] {
        state.upload_arrays.clear();
        state.estimates.drop_gone();
        for (const auto& b : cache.backends()) b->release_idle(keep);
      });

  metrics_endpoint metrics_server;
  if (!cfg.metrics_listen.empty()) {
    std::string error;
    const int port = metrics_server.start(cfg.metrics_listen, metrics.collectables(), &error);
    if (port < 0) die(error);
    if (!cfg.metrics_port_file.empty() && !write_port_file(cfg.metrics_port_file, port)) {
      die("cannot write " + cfg.metrics_port_file);
    }
    log_event("info", "metrics_listening", {{"address", cfg.metrics_listen}, {"port", port}});
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  spgemm_service service(state);
  local_service local(state);
  graph_service graph(state);
  values_service values(state);
  amg_service amg(state);
  grpc::ServerBuilder builder;
  // gRPC binds with SO_REUSEPORT by default: a second spgemmd on a taken port
  // would start and split the connections with the first (handles appearing
  // and vanishing at random). Without it the bind fails and we say so.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int port = 0;
  if (!cfg.listen.empty()) builder.AddListeningPort(cfg.listen, credentials, &port);
  // The Unix socket is this host's only (its file mode says whose): no TLS; tokens apply as on --listen.
  if (!cfg.unix_socket.empty()) builder.AddListeningPort("unix:" + cfg.unix_socket, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes));
  builder.RegisterService(&service);
  builder.RegisterService(&local);
  builder.RegisterService(&graph);
  builder.RegisterService(&values);
  builder.RegisterService(&amg);
  // The socket file is created no more open than the owner's, then given its mode.
  const mode_t umask_before = umask(0177);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  umask(umask_before);
  if (!server || (!cfg.listen.empty() && port == 0)) {
    const std::string socket = cfg.unix_socket.empty() ? "" : "unix:" + cfg.unix_socket;
    if (cfg.listen.empty()) die("cannot listen on " + socket + ": not a path the server may create");
    die("cannot listen on " + cfg.listen + ": the port is taken (another spgemmd? choose another with "
        "--listen=HOST:PORT) or the address is not one of this host's" +
        (socket.empty() ? "" : "; or " + socket + " is not a path the server may create"));
  }
  if (!cfg.unix_socket.empty() && chmod(cfg.unix_socket.c_str(), static_cast<mode_t>(cfg.unix_socket_mode)) != 0) {
    die("cannot set the permissions of " + cfg.unix_socket);
  }
  if (!cfg.port_file.empty() && !write_port_file(cfg.port_file, port)) die("cannot write " + cfg.port_file);
  log_event("info", "serving", {{"address", cfg.listen}, {"port", port}, {"unix_socket", cfg.unix_socket},
                                {"version", SPGEMMD_VERSION}, {"devices", static_cast<int64_t>(backends.size())},
                                {"tls", !cfg.tls_cert.empty()}, {"client_certificates", !cfg.tls_client_ca.empty()},
                                {"tokens", authenticator->needs_tokens()}, {"shared_memory", cfg.shared_memory},
                                {"cuda_ipc", cfg.cuda_ipc}});

  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) reload_tokens(*authenticator);
  log_event("info", "shutdown", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}, {"grace_seconds", cfg.grace_seconds}});

  // During the grace period the server still listens: health says
  // NOT_SERVING and new calls get UNAVAILABLE, so a client hears why rather
  // than failing to connect; calls in flight may finish. Then the rest are
  // cancelled (their jobs stop at the engine's next check and free what they
  // hold) and the server stops.
  state.shutting_down = true;
  state.sessions.end_all();  // open Local sessions would hold the shutdown for its grace period
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(false);
  state.calls.wait_idle(std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(cfg.grace_seconds * 1000)));
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  sched.stop();
  metrics_server.stop();
  log_event("info", "stopped", {});
  return 0;
}
