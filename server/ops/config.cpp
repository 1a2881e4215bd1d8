#include "ops/config.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/flags/parse.h>
#include <absl/flags/reflection.h>

#include "wire/address.hpp"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address host[:port], port 50051 where none is given; port 0 picks a free port "
          "(see --port_file). A port another process listens on stops the start. An address other hosts "
          "can reach needs --tls_cert/--tls_key and --tokens_file, or --insecure. Empty: only "
          "--unix_socket. Env: SPGEMMD_LISTEN");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound gRPC port is written to this file once the server is serving. "
          "Env: SPGEMMD_PORT_FILE");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus metrics address host[:port] (GET /metrics), port 9464 where none is given; empty "
          "disables; port 0 picks a free port (see --metrics_port_file). Env: SPGEMMD_METRICS_LISTEN");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the bound metrics port is written to this file. Env: SPGEMMD_METRICS_PORT_FILE");
ABSL_FLAG(std::string, backend, "auto",
          "Where matrices live and products run: 'auto' (every visible GPU, else the CPU) or 'cpu'. "
          "Env: SPGEMMD_BACKEND");
ABSL_FLAG(std::string, devices, "",
          "The GPUs to use, by CUDA ordinal, comma-separated (e.g. '0,2'); empty: every visible GPU. "
          "Env: SPGEMMD_DEVICES");
ABSL_FLAG(int32_t, cpu_backends, 1,
          "CPU backends to open where the CPU runs products: more than one stands in for several "
          "devices (tests of placement and of products split over devices). Env: SPGEMMD_CPU_BACKENDS");
ABSL_FLAG(double, device_budget_fraction, 0.8,
          "Byte budget per device (cache plus running jobs) as a fraction of its free memory at start; "
          "on the CPU backend a fraction of physical memory. Env: SPGEMMD_DEVICE_BUDGET_FRACTION");
ABSL_FLAG(int64_t, device_budget_bytes, 0,
          "Byte budget per device; overrides --device_budget_fraction when > 0. "
          "Env: SPGEMMD_DEVICE_BUDGET_BYTES");
ABSL_FLAG(int64_t, host_budget_bytes, 0,
          "Host memory for matrices spilled from devices; 0: a quarter of physical memory. "
          "Env: SPGEMMD_HOST_BUDGET_BYTES");
ABSL_FLAG(std::string, spill_dir, "",
          "Directory where a result kept in host memory goes on past the host budget (a product in row "
          "panels larger than host memory), in unlinked temporary files; empty: such a result fails. "
          "Env: SPGEMMD_SPILL_DIR");
ABSL_FLAG(int64_t, spill_budget_bytes, 0,
          "Bytes the spill files may take; 0: 90% of what the spill directory's file system has free at "
          "start. Env: SPGEMMD_SPILL_BUDGET_BYTES");
ABSL_FLAG(int32_t, max_queue, 256,
          "Jobs waiting for admission at most; more are rejected with RESOURCE_EXHAUSTED. "
          "Env: SPGEMMD_MAX_QUEUE");
ABSL_FLAG(int64_t, default_ttl_seconds, 3600,
          "A matrix unused this long is deleted (uploads may set their own); 0: never. "
          "Env: SPGEMMD_DEFAULT_TTL_SECONDS");
ABSL_FLAG(int64_t, max_message_bytes, 8 << 20,
          "Largest gRPC message the server receives (upload chunks must fit). "
          "Env: SPGEMMD_MAX_MESSAGE_BYTES");
ABSL_FLAG(int64_t, chunk_bytes, 2 << 20,
          "Default size of streamed result and download chunks (requests may override). "
          "Env: SPGEMMD_CHUNK_BYTES");
ABSL_FLAG(int64_t, upload_spare_bytes, 256 << 20,
          "Host memory kept from finished uploads for the next uploads to be assembled into (memory "
          "already written costs no page faults); 0: none. Env: SPGEMMD_UPLOAD_SPARE_BYTES");
ABSL_FLAG(int64_t, device_keep_bytes, 512 << 20,
          "Freed device memory each GPU's pool keeps for the next jobs once no call has run for a second (the "
          "rest, and the pinned host staging buffers but two, goes back to the driver); 0: none. "
          "Env: SPGEMMD_DEVICE_KEEP_BYTES");
ABSL_FLAG(double, grace_seconds, 20,
          "On SIGTERM/SIGINT: stop accepting calls, let in-flight calls finish for this long, then "
          "cancel them. Env: SPGEMMD_GRACE_SECONDS");
ABSL_FLAG(std::string, log_format, "text",
          "Log lines on stderr: 'text' (key=value) or 'json'. Env: SPGEMMD_LOG_FORMAT");
ABSL_FLAG(int32_t, cpu_threads, 0,
          "Threads of the CPU backend per product; 0: one per hardware thread. Env: SPGEMMD_CPU_THREADS");
ABSL_FLAG(int32_t, workers, 0,
          "Jobs that may run at once per backend (when their estimates fit together); 0: 4. "
          "Env: SPGEMMD_WORKERS");
ABSL_FLAG(bool, warmup, true, "Run a tiny multiply on every backend at start. Env: SPGEMMD_WARMUP");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain (the server's first): serve gRPC over TLS; needs --tls_key. Env: SPGEMMD_TLS_CERT");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert. Env: SPGEMMD_TLS_KEY");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM root certificates: every client must present a certificate they signed (mutual TLS); needs "
          "--tls_cert. Env: SPGEMMD_TLS_CLIENT_CA");
ABSL_FLAG(std::string, tokens_file, "",
          "Bearer tokens, one per line with its tenant, admin flag and quotas (docs/configuration.md#security): "
          "every call needs one of them; read again on SIGHUP. Empty: one tenant, no tokens. "
          "Env: SPGEMMD_TOKENS_FILE");
ABSL_FLAG(bool, insecure, false,
          "Serve an address other hosts can reach (--listen) without TLS and tokens. Env: SPGEMMD_INSECURE");
ABSL_FLAG(std::string, unix_socket, "",
          "Also serve on this Unix domain socket (a path; clients connect to unix:///path), without TLS: "
          "its file mode says who on this host may connect, and tokens apply as on --listen; empty: TCP "
          "only. Env: SPGEMMD_UNIX_SOCKET");
ABSL_FLAG(std::string, unix_socket_mode, "0600",
          "Permissions of the Unix socket file, in octal: who on the host may connect (0600: the server's "
          "user; 0660: its group too). Env: SPGEMMD_UNIX_SOCKET_MODE");
ABSL_FLAG(bool, shared_memory, true,
          "Let callers on this host (loopback or the Unix socket) register shared-memory regions and pass "
          "matrices through them instead of messages (Local service). Env: SPGEMMD_SHARED_MEMORY");
ABSL_FLAG(bool, cuda_ipc, true,
          "Let callers on this host pass matrices in CUDA device memory by IPC handle (Local service; GPU "
          "backends). Env: SPGEMMD_CUDA_IPC");
ABSL_FLAG(int32_t, max_regions, 64,
          "Shared-memory regions a tenant may have registered at once. Env: SPGEMMD_MAX_REGIONS");
ABSL_FLAG(bool, pin_regions, true,
          "Pin shared-memory regions for the GPUs' copy engines on first use, so that results go from a device "
          "straight into a region and uploads straight out of one (GPU backends). Env: SPGEMMD_PIN_REGIONS");
ABSL_FLAG(int64_t, pinned_region_bytes, 0,
          "Host memory pinned for regions at once, all tenants together (a region past what is left takes the "
          "host's copies instead); 0: an eighth of physical memory. Env: SPGEMMD_PINNED_REGION_BYTES");

namespace spgemmd {

namespace {

const char* const flag_names[] = {
    "listen",           "port_file",          "metrics_listen",    "metrics_port_file",
    "backend",          "devices",            "cpu_backends",
    "device_budget_fraction", "device_budget_bytes", "host_budget_bytes", "spill_dir", "spill_budget_bytes",
    "max_queue",        "default_ttl_seconds", "max_message_bytes", "chunk_bytes",
    "upload_spare_bytes", "device_keep_bytes", "grace_seconds",     "log_format",        "cpu_threads",
    "workers",          "warmup",             "tls_cert",          "tls_key",
    "tls_client_ca",    "tokens_file",        "insecure",          "unix_socket",
    "unix_socket_mode", "shared_memory",      "cuda_ipc",          "max_regions",
    "pin_regions",      "pinned_region_bytes"};

constexpr int default_metrics_port = 9464;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "spgemmd: %s\n", message.c_str());
  std::exit(2);
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") return false;
    for (std::string_view h : {"-h", "-help", "--help", "-helpfull", "--helpfull", "-helpshort", "--helpshort"}) {
      if (a == h || (a.size() > h.size() && a.substr(0, h.size() + 1) == std::string(h) + "=")) return true;
    }
  }
  return false;
}

// `text` in lines of at most `width` characters, each after `indent`.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

// Our own usage text: Abseil's names the source files that define the flags
// (build paths) and exits 1 on --help.
void print_usage() {
  std::printf(
      "spgemmd: sparse matrix-matrix multiplication over gRPC (package spgemm.v1).\n"
      "\n"
      "  spgemmd                                      every GPU (else the CPU), port 50051 on all interfaces\n"
      "  spgemmd --listen=127.0.0.1 --backend=cpu     local use on the CPU backend\n"
      "  spgemmd --listen=127.0.0.1:0 --port_file=/tmp/port   a free port, written to the file\n"
      "  spgemmd --unix_socket=/run/spgemmd/sock      TCP and a Unix socket, for clients on this host\n"
      "\n"
      "Every flag may also be set by the environment variable SPGEMMD_<FLAG_NAME_UPPERCASE>; a flag\n"
      "given on the command line wins. See docs/service.md and docs/configuration.md.\n"
      "\n"
      "Flags:\n");
  for (const char* name : flag_names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    const std::string value = flag->DefaultValue();
    std::printf("  --%s (default: %s)\n%s", name, value.empty() ? "none" : value.c_str(),
                wrapped(flag->Help(), 72, "      ").c_str());
  }
}

}  // namespace

config parse_config(int argc, char** argv) {
  if (asks_for_help(argc, argv)) {
    print_usage();
    std::exit(0);
  }

  // Environment fallbacks go in front of the command line's flags, so a flag
  // given on the command line (parsed later) wins.
  std::vector<std::string> env_args;
  for (const char* name : flag_names) {
    std::string env = "SPGEMMD_";
    for (const char* p = name; *p; ++p) env += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
    if (const char* value = std::getenv(env.c_str())) env_args.push_back(std::string("--") + name + "=" + value);
  }
  std::vector<char*> args;
  args.push_back(argv[0]);
  for (auto& a : env_args) args.push_back(a.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  absl::ParseCommandLine(static_cast<int>(args.size() - 1), args.data());

  config c;
  c.listen = spgemm::wire::with_default_port(absl::GetFlag(FLAGS_listen));
  c.port_file = absl::GetFlag(FLAGS_port_file);
  c.metrics_listen = spgemm::wire::with_default_port(absl::GetFlag(FLAGS_metrics_listen), default_metrics_port);
  c.metrics_port_file = absl::GetFlag(FLAGS_metrics_port_file);
  c.backend = absl::GetFlag(FLAGS_backend);
  c.cpu_backends = absl::GetFlag(FLAGS_cpu_backends);
  const std::string devices = absl::GetFlag(FLAGS_devices);
  for (std::size_t start = 0; start < devices.size();) {
    std::size_t end = devices.find(',', start);
    if (end == std::string::npos) end = devices.size();
    const std::string ordinal = devices.substr(start, end - start);
    char* rest = nullptr;
    const long value = std::strtol(ordinal.c_str(), &rest, 10);
    if (ordinal.empty() || *rest != '\0' || value < 0 || value > 1024) {
      die("--devices must list CUDA ordinals separated by commas, e.g. 0,1 (got '" + devices + "')");
    }
    c.devices.push_back(static_cast<int>(value));
    start = end + 1;
  }
  c.device_budget_fraction = absl::GetFlag(FLAGS_device_budget_fraction);
  c.device_budget_bytes = absl::GetFlag(FLAGS_device_budget_bytes);
  c.host_budget_bytes = absl::GetFlag(FLAGS_host_budget_bytes);
  c.spill_dir = absl::GetFlag(FLAGS_spill_dir);
  c.spill_budget_bytes = absl::GetFlag(FLAGS_spill_budget_bytes);
  c.max_queue = absl::GetFlag(FLAGS_max_queue);
  c.default_ttl_seconds = absl::GetFlag(FLAGS_default_ttl_seconds);
  c.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  c.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  c.upload_spare_bytes = absl::GetFlag(FLAGS_upload_spare_bytes);
  c.device_keep_bytes = absl::GetFlag(FLAGS_device_keep_bytes);
  c.grace_seconds = absl::GetFlag(FLAGS_grace_seconds);
  c.log_format = absl::GetFlag(FLAGS_log_format);
  c.cpu_threads = absl::GetFlag(FLAGS_cpu_threads);
  c.workers = absl::GetFlag(FLAGS_workers);
  c.warmup = absl::GetFlag(FLAGS_warmup);
  c.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  c.tls_key = absl::GetFlag(FLAGS_tls_key);
  c.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  c.tokens_file = absl::GetFlag(FLAGS_tokens_file);
  c.insecure = absl::GetFlag(FLAGS_insecure);
  c.unix_socket = absl::GetFlag(FLAGS_unix_socket);
  c.shared_memory = absl::GetFlag(FLAGS_shared_memory);
  c.cuda_ipc = absl::GetFlag(FLAGS_cuda_ipc);
  c.max_regions = absl::GetFlag(FLAGS_max_regions);
  c.pin_regions = absl::GetFlag(FLAGS_pin_regions);
  c.pinned_region_bytes = absl::GetFlag(FLAGS_pinned_region_bytes);
  if (c.pinned_region_bytes < 0) die("--pinned_region_bytes must not be negative");
  if (c.pinned_region_bytes == 0) {
    c.pinned_region_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / 8;
  }
  if (!c.pin_regions) c.pinned_region_bytes = 0;
  const std::string mode = absl::GetFlag(FLAGS_unix_socket_mode);
  char* mode_end = nullptr;
  c.unix_socket_mode = static_cast<int>(std::strtol(mode.c_str(), &mode_end, 8));
  if (mode.empty() || *mode_end != '\0' || c.unix_socket_mode < 0 || c.unix_socket_mode > 0777) {
    die("--unix_socket_mode must be octal permissions such as 0600 or 0660 (got '" + mode + "')");
  }
  if (c.unix_socket.rfind("unix:", 0) == 0) die("--unix_socket takes a path, not an address (got '" + c.unix_socket + "')");
  if (c.max_regions < 0) die("--max_regions must not be negative");
  if (c.listen.empty() && c.unix_socket.empty()) die("give --listen, --unix_socket or both");

  if (c.backend != "auto" && c.backend != "cpu") die("--backend must be 'auto' or 'cpu' (got '" + c.backend + "')");
  if (c.log_format != "text" && c.log_format != "json") die("--log_format must be 'text' or 'json'");
  if (!(c.device_budget_fraction > 0 && c.device_budget_fraction <= 1)) die("--device_budget_fraction must be in (0, 1]");
  if (c.device_budget_bytes < 0 || c.host_budget_bytes < 0 || c.spill_budget_bytes < 0) {
    die("budgets must not be negative");
  }
  if (c.upload_spare_bytes < 0) die("--upload_spare_bytes must not be negative");
  if (c.device_keep_bytes < 0) die("--device_keep_bytes must not be negative");
  if (c.max_queue < 0) die("--max_queue must not be negative");
  if (c.default_ttl_seconds < 0) die("--default_ttl_seconds must not be negative");
  if (c.max_message_bytes < 4096) die("--max_message_bytes must be at least 4096");
  if (c.chunk_bytes < 1024 || c.chunk_bytes > c.max_message_bytes) {
    die("--chunk_bytes must be between 1024 and --max_message_bytes");
  }
  if (c.grace_seconds < 0) die("--grace_seconds must not be negative");
  if (c.cpu_threads < 0 || c.workers < 0) die("--cpu_threads and --workers must not be negative");
  if (c.cpu_backends < 1 || c.cpu_backends > 64) die("--cpu_backends must be between 1 and 64");
  if (c.workers == 0) c.workers = 4;
  if (c.tls_cert.empty() != c.tls_key.empty()) die("--tls_cert and --tls_key go together: give both or neither");
  if (!c.tls_client_ca.empty() && c.tls_cert.empty()) die("--tls_client_ca needs --tls_cert and --tls_key");
  return c;
}

}  // namespace spgemmd
