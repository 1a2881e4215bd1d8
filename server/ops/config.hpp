// spgemmd's settings: Abseil flags, each with an environment variable
// fallback SPGEMMD_<FLAG_NAME_UPPERCASE> (a flag given on the command line wins).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spgemmd {

struct config {
  std::string listen = "127.0.0.1:50051"; // gRPC address; port 0 picks a free port
  std::string port_file;                  // written with the bound gRPC port once serving
  std::string metrics_listen = "127.0.0.1:9464";  // Prometheus HTTP; empty disables
  std::string metrics_port_file;          // written with the bound metrics port
  std::string backend = "auto";           // auto | cpu
  std::vector<int> devices;               // GPUs by CUDA ordinal; empty: every visible one
  int cpu_backends = 1;                   // CPU backends where the CPU runs (more: stand-ins for devices)
  double device_budget_fraction = 0.8;    // of free device memory (CPU: of physical memory)
  int64_t device_budget_bytes = 0;        // > 0 overrides the fraction
  int64_t host_budget_bytes = 0;          // spill space; 0: a quarter of physical memory
  std::string spill_dir;                  // kept results past the host budget; empty: none
  int64_t spill_budget_bytes = 0;         // 0: 90% of the spill directory's free space at start
  int max_queue = 256;
  int64_t default_ttl_seconds = 3600;     // 0: never expire
  int64_t max_message_bytes = 8 << 20;    // gRPC receive limit
  int64_t chunk_bytes = 2 << 20;          // default streamed chunk size
  int64_t upload_spare_bytes = 256 << 20; // arrays of finished uploads kept for the next ones
  int64_t device_keep_bytes = 512 << 20;  // freed device memory a device's pool keeps once quiet
  double grace_seconds = 20;              // SIGTERM grace period
  std::string log_format = "text";        // text | json
  int cpu_threads = 0;                    // CPU backend threads; 0: all
  int workers = 0;                        // jobs run at once per backend; 0: auto
  bool warmup = true;
  std::string tls_cert, tls_key;          // PEM chain and key: TLS on the gRPC port
  std::string tls_client_ca;              // PEM roots: clients must present a certificate they signed
  std::string tokens_file;                // bearer tokens -> tenants and quotas; reloaded on SIGHUP
  bool insecure = false;                  // serve a non-loopback address without TLS and tokens
  std::string unix_socket;                // also serve on this Unix socket (no TLS); empty: TCP only
  int unix_socket_mode = 0600;            // the socket file's permissions: who on the host may connect
  bool shared_memory = true;              // shared-memory regions (Local service) for callers on this host
  bool cuda_ipc = true;                   // CUDA IPC (Local service) for callers on this host
  int max_regions = 64;                   // shared-memory regions a tenant may register at once
  bool pin_regions = true;                // regions pinned for GPU copies (results and uploads device <-> region)
  int64_t pinned_region_bytes = 0;        // host memory pinned for them, all tenants; 0 in flags: an eighth of RAM
};

// Parses argv (and the SPGEMMD_* environment), exits on --help or a bad
// value. Returns the settings.
config parse_config(int argc, char** argv);

}  // namespace spgemmd
