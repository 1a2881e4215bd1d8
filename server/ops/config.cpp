#include "ops/config.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/flags/parse.h>
#include <absl/flags/reflection.h>

#include "wire/address.hpp"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "gRPC listen address host[:port], port 50051 where none is given; port 0 picks a free port "
          "(see --port_file). A port another process listens on stops the start. Env: SPGEMMD_LISTEN");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound gRPC port is written to this file once the server is serving. "
          "Env: SPGEMMD_PORT_FILE");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
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

namespace spgemmd {

namespace {

const char* const flag_names[] = {
    "listen",           "port_file",          "metrics_listen",    "metrics_port_file",
    "backend",          "devices",            "cpu_backends",
    "device_budget_fraction", "device_budget_bytes", "host_budget_bytes",
    "max_queue",        "default_ttl_seconds", "max_message_bytes", "chunk_bytes",
    "upload_spare_bytes", "grace_seconds",     "log_format",        "cpu_threads",
    "workers",          "warmup"};

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
  c.max_queue = absl::GetFlag(FLAGS_max_queue);
  c.default_ttl_seconds = absl::GetFlag(FLAGS_default_ttl_seconds);
  c.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  c.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  c.upload_spare_bytes = absl::GetFlag(FLAGS_upload_spare_bytes);
  c.grace_seconds = absl::GetFlag(FLAGS_grace_seconds);
  c.log_format = absl::GetFlag(FLAGS_log_format);
  c.cpu_threads = absl::GetFlag(FLAGS_cpu_threads);
  c.workers = absl::GetFlag(FLAGS_workers);
  c.warmup = absl::GetFlag(FLAGS_warmup);

  if (c.backend != "auto" && c.backend != "cpu") die("--backend must be 'auto' or 'cpu' (got '" + c.backend + "')");
  if (c.log_format != "text" && c.log_format != "json") die("--log_format must be 'text' or 'json'");
  if (!(c.device_budget_fraction > 0 && c.device_budget_fraction <= 1)) die("--device_budget_fraction must be in (0, 1]");
  if (c.device_budget_bytes < 0 || c.host_budget_bytes < 0) die("budgets must not be negative");
  if (c.upload_spare_bytes < 0) die("--upload_spare_bytes must not be negative");
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
  return c;
}

}  // namespace spgemmd
