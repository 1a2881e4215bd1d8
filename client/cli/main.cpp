// spgemm: the command-line client of spgemmd.
//
//   spgemm multiply A.mtx [B.mtx] -o C.mtx [--algorithm NAME] [--keep] [--stats]
//   spgemm multiply poisson3d7:64 -o C.mtx      (a generated operand)
//   spgemm galerkin P.mtx A.mtx -o Ac.mtx      spgemm transpose A.mtx -o At.mtx
//   spgemm upload F.mtx...    spgemm download HANDLE -o F.mtx
//   spgemm ls    spgemm rm HANDLE...    spgemm status
//   spgemm --server h1:p,h2:p,h3:p multiply A.mtx B.mtx -o C.mtx [--panels N]
//   spgemm batch JOBS.yaml [--concurrency N] [--retries N] [--summary F.tsv] [--scheduler DASK]
//
// Operands are .mtx / .mtx.gz files or generator specs (uploaded for the call
// and deleted after it, unless --keep) or handles of matrices already on the
// server ("m-..."). Files and specs are read with the engine's host-only core
// (spgemm::engine_core), the reader and generators spgemm-bench uses, so both
// programs take the same operands and report bad ones in the same words.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interrupts.hpp"
#include "progress.hpp"
#include "spgemm/client/client.hpp"
#include "spgemm/client/cluster.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"

namespace {

namespace sc = spgemm::client;
namespace v1 = spgemm::v1;
using spgemm::cli::human_bytes;
using spgemm::cli::human_duration;
using spgemm::cli::interrupts;
using spgemm::cli::progress_bar;

constexpr int exit_ok = 0;
constexpr int exit_usage = 2;
constexpr int exit_server = 3;
constexpr int exit_connection = 4;

constexpr const char* exit_codes_help =
    "Exit codes:\n"
    "  0  success\n"
    "  2  usage or bad input: bad arguments, a missing or malformed .mtx file or\n"
    "     generator spec (as spgemm-bench reports them), an output file that cannot\n"
    "     be written, or the server's INVALID_ARGUMENT / NOT_FOUND (e.g. mismatched\n"
    "     shapes, an unknown handle)\n"
    "  3  the server failed the request (any other gRPC status, e.g.\n"
    "     RESOURCE_EXHAUSTED, INTERNAL)\n"
    "  4  no connection: the server is unreachable (UNAVAILABLE) or the deadline\n"
    "     passed before it connected (DEADLINE_EXCEEDED)\n"
    "  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM: the job was cancelled on\n"
    "     the server, the operands uploaded for it deleted, no partial output file left\n"
    "\n"
    "Environment:\n"
    "  SPGEMM_SERVER  server address when --server is not given (default localhost:50051;\n"
    "                 port 50051 where none is given); a comma-separated list of\n"
    "                 servers is used by multiply only\n"
    "  SPGEMM_TOKEN   bearer token when --token is not given\n";

constexpr const char* how_to_start_a_server =
    "spgemm: start a server on this host with `spgemmd` (it listens on port 50051; in a\n"
    "        build tree: build/server/spgemmd), or name a running one with --server\n"
    "        HOST[:PORT] or SPGEMM_SERVER\n";

// A failure with its exit code, raised by the CLI itself.
struct cli_error {
  int code;
  std::string message;
};

struct global_options {
  std::string server;
  std::string token;
  bool tls = false;
  std::string ca_cert;
  std::string client_cert, client_key;
  double timeout_s = 0;
};

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool looks_like_handle(const std::string& s) { return s.rfind("m-", 0) == 0 && !file_exists(s); }

const char* type_name(v1::ValueType t) {
  switch (t) {
    case v1::FLOAT32: return "f32";
    case v1::FLOAT64: return "f64";
    default: return "?";
  }
}

std::string count(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > (s[0] == '-' ? 1 : 0); i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// ---------------------------------------------------------------- operands

using local_matrix = spgemm::csr_matrix<double>;

// An operand named on the command line: a file or generator spec read up
// front (so bad input is reported before any connection is made), or a
// server-side handle.
struct operand {
  std::string arg;
  std::optional<local_matrix> matrix;  // when a file or spec
  sc::RemoteMatrix uploaded;           // after upload
  std::string handle;
};

operand read_operand(const std::string& arg) {
  operand op;
  op.arg = arg;
  if (looks_like_handle(arg)) {
    op.handle = arg;
  } else {
    op.matrix = spgemm::load_matrix(arg);
  }
  return op;
}

// The name a matrix is stored under: the file's name, or the spec.
std::string upload_name(const std::string& arg) {
  auto pos = arg.find_last_of('/');
  return spgemm::is_generator_spec(arg) || pos == std::string::npos ? arg : arg.substr(pos + 1);
}

sc::matrix_ref ref_of(const local_matrix& m) {
  return sc::matrix_ref::of(m.rows, m.cols, m.row_offsets.data(), m.col_indices.data(), m.values.data());
}

// The same arrays as the client library's CSR (a Cluster takes those).
sc::csr_matrix to_client(local_matrix&& m) {
  sc::csr_matrix c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.row_offsets = std::move(m.row_offsets);
  c.col_indices = std::move(m.col_indices);
  c.values = std::move(m.values);
  return c;
}

// Uploads a file or spec operand (once); returns the bytes sent.
std::int64_t upload_operand(sc::Client& client, operand& op) {
  if (!op.matrix) return 0;
  progress_bar bar("upload");
  sc::upload_options o;
  o.name = upload_name(op.arg);
  o.on_progress = bar.callback();
  op.uploaded = client.upload(ref_of(*op.matrix), o);
  op.handle = op.uploaded.handle();
  op.matrix.reset();
  bar.finish();
  return bar.bytes();
}

// Writes the result file with its own progress bar; a signal stops the write
// (the partial file is removed).
void write_output(const std::string& path, const sc::csr_matrix& m, const interrupts& irq) {
  progress_bar bar("write");
  const sc::progress_callback show = bar.callback();
  try {
    sc::write_matrix_market(path, m, [&](const sc::progress& p) {
      irq.check();
      show(p);
    });
  } catch (const sc::Error& e) {
    throw cli_error{exit_usage, e.message()};
  }
  bar.finish();
}

// `product`: a product or Galerkin product (a transpose has no flops to count).
void print_stats(const v1::JobStats& s, std::int64_t bytes_up, std::int64_t bytes_down, bool product) {
  std::fprintf(stderr, "algorithm   %s on %s\n", s.algorithm().c_str(), s.device().c_str());
  std::fprintf(stderr, "time        compute %s, queue %s, total %s (server-side)\n",
               human_duration(s.compute_ms() / 1e3).c_str(), human_duration(s.queue_ms() / 1e3).c_str(),
               human_duration(s.total_ms() / 1e3).c_str());
  if (product) std::fprintf(stderr, "GFLOPS      %.3f (%.4g flops)\n", s.gflops(), s.flops());
  std::fprintf(stderr, "nnz         %s\n", count(s.nnz()).c_str());
  std::fprintf(stderr, "bytes       %s uploaded, %s streamed back, %s job estimate\n",
               human_bytes(static_cast<double>(bytes_up)).c_str(),
               human_bytes(static_cast<double>(bytes_down ? bytes_down : s.bytes_out())).c_str(),
               human_bytes(static_cast<double>(s.estimate_bytes())).c_str());
}

// Keeps or drops the uploaded operands after the job (kept only with --keep).
void settle_operands(std::vector<operand>& ops, bool keep) {
  for (auto& op : ops) {
    if (!op.uploaded) continue;
    if (keep) {
      std::fprintf(stderr, "kept operand %s as %s\n", op.arg.c_str(), op.uploaded.handle().c_str());
      op.uploaded.release();
    } else {
      op.uploaded = sc::RemoteMatrix();  // deletes it on the server now
    }
  }
}

// The part of a product command shared by multiply, galerkin and transpose.
struct product_args {
  std::string output;
  std::string algorithm;
  std::string name;
  bool keep = false;
  bool stats = false;
};

void check_output(const product_args& a) {
  if (!a.keep && a.output.empty()) throw cli_error{exit_usage, "-o/--output is required (or --keep)"};
}

// Runs the job on the uploaded operands, settles them, then prints the kept
// result's handle or writes the streamed result (after the operands are gone
// from the server, so that only the local file remains to be written).
template <typename Local, typename Kept>
void run_product(const product_args& args, std::vector<operand>& ops, std::int64_t bytes_up, bool product,
                 const interrupts& irq, Local&& local, Kept&& kept) {
  sc::product_options o;
  o.algorithm = args.algorithm;
  o.name = args.name;
  if (args.keep) {
    sc::kept_result r = kept(o);
    settle_operands(ops, true);
    std::printf("%s\n", r.matrix.release().c_str());
    if (args.stats) print_stats(r.stats, bytes_up, 0, product);
    return;
  }
  progress_bar bar("result");
  o.on_progress = bar.callback();
  sc::local_result r = local(o);
  bar.finish();
  settle_operands(ops, false);
  write_output(args.output, r.matrix, irq);
  if (args.stats) print_stats(r.stats, bytes_up, bar.bytes(), product);
}

int exit_code_of(const sc::Error& e, const sc::Client* client) {
  switch (e.code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::OUT_OF_RANGE:
      return exit_usage;
    case grpc::StatusCode::UNAVAILABLE:
      return exit_connection;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return client && client->connected() ? exit_server : exit_connection;
    default:
      return exit_server;
  }
}

int report_interrupt(int sig) {
  std::fprintf(stderr,
               "spgemm: interrupted by %s: cancelled on the server; the operands uploaded for the job were "
               "deleted and no partial output file was left\n",
               spgemm::cli::signal_name(sig));
  return 128 + sig;
}

void add_product_flags(CLI::App* sub, product_args& a, bool with_algorithm) {
  sub->add_option("-o,--output", a.output, "Result file (.mtx, or .mtx.gz to compress); required unless --keep");
  if (with_algorithm) {
    sub->add_option("--algorithm", a.algorithm, "Method: auto (default); on a GPU server rmerge, hash, esc or block; gustavson (CPU)");
  }
  sub->add_flag("--keep", a.keep,
                "Keep the result on the server and print its handle instead of downloading it; "
                "uploaded operands are kept too (their handles go to stderr)");
  sub->add_option("--name", a.name, "Name of the kept result");
  sub->add_flag("--stats", a.stats,
                with_algorithm ? "Print server-side time, GFLOPS, nnz and bytes moved on stderr"
                               : "Print server-side time, nnz and bytes moved on stderr");
}

}  // namespace

int main(int argc, char** argv) {
  interrupts irq;  // first: the signals are blocked in every thread started after it
  CLI::App app{"spgemm: sparse matrix-matrix products on an spgemmd server.\n"
               "Operands are Matrix Market files (.mtx, .mtx.gz), generator specs as spgemm-bench takes "
               "them (poisson3d7:64, rmat:16:16, elasticity3d:20, ...) or handles (m-...) of matrices "
               "stored on the server.",
               "spgemm"};
  app.footer(exit_codes_help);
  app.require_subcommand(1);

  global_options g;
  const char* env_server = std::getenv("SPGEMM_SERVER");
  const char* env_token = std::getenv("SPGEMM_TOKEN");
  g.server = env_server && *env_server ? env_server : "localhost:50051";
  g.token = env_token ? env_token : "";
  app.add_option("-s,--server", g.server,
                 "Server address host[:port], port 50051 where none is given (env SPGEMM_SERVER); multiply "
                 "also takes a comma-separated list (or dns:///name:port) and spreads its work over those servers")
      ->capture_default_str();
  app.add_option("--token", g.token, "Bearer token sent with every call (env SPGEMM_TOKEN)");
  app.add_flag("--tls", g.tls, "Connect with TLS");
  app.add_option("--ca,--ca-cert", g.ca_cert, "PEM root certificates for TLS (default: the system's); implies --tls")
      ->check(CLI::ExistingFile);
  app.add_option("--cert", g.client_cert,
                 "PEM client certificate, for a server that asks for one (with --key); implies --tls")
      ->check(CLI::ExistingFile);
  app.add_option("--key", g.client_key, "PEM private key of --cert")->check(CLI::ExistingFile);
  app.add_option("--timeout", g.timeout_s, "Deadline of each call in seconds (0: none)")->capture_default_str();

  // multiply
  product_args mul;
  std::string mul_a, mul_b;
  auto* multiply = app.add_subcommand("multiply", "C = A * B (B defaults to A)");
  multiply->add_option("A", mul_a, "Left operand: .mtx file, generator spec or handle")->required();
  multiply->add_option("B", mul_b, "Right operand: .mtx file, generator spec or handle (default: A)");
  add_product_flags(multiply, mul, true);
  int mul_panels = 0;
  multiply->add_option("--panels", mul_panels,
                       "Split A into N row panels (balanced by nnz) multiplied in parallel over the servers "
                       "of --server, B uploaded to each; a failed server's panels run on the others")
      ->check(CLI::Range(1, 1 << 20));
  multiply->footer(exit_codes_help);

  // galerkin
  product_args gal;
  std::string gal_p, gal_a, gal_form = "ptap";
  auto* galerkin = app.add_subcommand("galerkin", "Galerkin product Ac = P^T A P (or P A P^T with --form papt)");
  galerkin->add_option("P", gal_p, "Prolongator (or restriction for papt): .mtx file or handle")->required();
  galerkin->add_option("A", gal_a, "Fine matrix: .mtx file, generator spec or handle")->required();
  galerkin->add_option("--form", gal_form, "ptap (P^T A P) or papt (P A P^T)")
      ->check(CLI::IsMember({"ptap", "papt"}))
      ->capture_default_str();
  add_product_flags(galerkin, gal, true);
  galerkin->footer(exit_codes_help);

  // transpose
  product_args tr;
  std::string tr_a;
  auto* transpose = app.add_subcommand("transpose", "At = A^T");
  transpose->add_option("A", tr_a, "Operand: .mtx file, generator spec or handle")->required();
  add_product_flags(transpose, tr, false);
  transpose->footer(exit_codes_help);

  // upload
  std::vector<std::string> up_files;
  std::string up_name;
  std::int64_t up_ttl = 0;
  auto* upload = app.add_subcommand("upload", "Upload .mtx files or generated matrices; prints one handle per matrix");
  upload->add_option("FILE", up_files, "Matrix Market files (.mtx, .mtx.gz) or generator specs")->required();
  upload->add_option("--name", up_name, "Name shown by ls (default: the file name or the spec)");
  upload->add_option("--ttl", up_ttl, "Delete after this many seconds unused (0: the server's default)");
  upload->footer(exit_codes_help);

  // download
  std::string dl_handle, dl_output;
  auto* download = app.add_subcommand("download", "Download a stored matrix to a .mtx file");
  download->add_option("HANDLE", dl_handle, "Handle (m-...)")->required();
  download->add_option("-o,--output", dl_output, "Output file (.mtx, or .mtx.gz to compress)")->required();
  download->footer(exit_codes_help);

  // ls, rm, status
  auto* ls = app.add_subcommand("ls", "List the matrices stored on the server");
  ls->footer(exit_codes_help);
  std::vector<std::string> rm_handles;
  auto* rm = app.add_subcommand("rm", "Delete stored matrices");
  rm->add_option("HANDLE", rm_handles, "Handles (m-...)")->required();
  rm->footer(exit_codes_help);
  auto* status = app.add_subcommand("status", "Show the server's devices, memory, cache and jobs");
  status->footer(exit_codes_help);

  // batch: one implementation of the job file, the Python client's (spgemm.batch, Dask included)
  std::string batch_jobs;
  auto* batch = app.add_subcommand(
      "batch",
      "Run a job file (YAML): products, graph steps, graph algorithms and AMG solves chained by names over "
      "one or several servers, "
      "bounded concurrency, retries on UNAVAILABLE, resumable, a summary TSV (docs/graph.md). Runs the "
      "Python client's batch runner, `$SPGEMM_PYTHON -m spgemm.batch` (python3 by default); its options "
      "(--concurrency, --retries, --summary, --scheduler, --no-progress) pass through");
  batch->add_option("JOBS", batch_jobs, "The job file")->required();
  batch->allow_extras();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_usage;
  }

  if (*batch) {
    const char* env_python = std::getenv("SPGEMM_PYTHON");
    const std::string python = env_python && *env_python ? env_python : "python3";
    std::vector<std::string> args = {python, "-m", "spgemm.batch", batch_jobs};
    if (app.count("--server") > 0) args.insert(args.end(), {"--server", g.server});
    for (const std::string& extra : batch->remaining()) args.push_back(extra);
    std::vector<char*> exec_argv;
    for (std::string& a : args) exec_argv.push_back(a.data());
    exec_argv.push_back(nullptr);
    ::execvp(exec_argv[0], exec_argv.data());
    std::cerr << "spgemm batch: cannot run " << python << " (" << std::strerror(errno)
              << "); it runs the Python client's batch runner: pip install ./client/python, or set SPGEMM_PYTHON\n";
    return exit_usage;
  }

  std::unique_ptr<sc::Client> client;
  auto connect = [&]() -> sc::Client& {
    sc::connection_options o;
    o.address = g.server;
    o.tls = g.tls || !g.ca_cert.empty() || !g.client_cert.empty();
    o.root_cert_file = g.ca_cert;
    o.client_cert_file = g.client_cert;
    o.client_key_file = g.client_key;
    o.token = g.token;
    o.deadline = std::chrono::milliseconds(static_cast<std::int64_t>(g.timeout_s * 1e3));
    o.cancel = irq.cancellation();
    client = std::make_unique<sc::Client>(o);
    return *client;
  };

  const std::vector<std::string> servers = sc::split_addresses(g.server);
  const bool use_cluster = *multiply && (servers.size() > 1 || mul_panels > 0 || g.server.rfind("dns:", 0) == 0);

  try {
    if (servers.size() > 1 && !*multiply) {
      throw cli_error{exit_usage, "--server lists several servers: only multiply uses more than one"};
    }
    if (use_cluster) {
      // Several servers: one product on the least busy one, or split by row
      // panels of A (--panels) over all of them, with failover.
      check_output(mul);
      if (mul.keep) throw cli_error{exit_usage, "--keep takes a single server (a kept result lives on one)"};
      if (looks_like_handle(mul_a) || (!mul_b.empty() && looks_like_handle(mul_b))) {
        throw cli_error{exit_usage, "with several servers the operands must be .mtx files or generator specs, not handles"};
      }
      const sc::csr_matrix a = to_client(spgemm::load_matrix(mul_a));
      std::optional<sc::csr_matrix> b_file;
      if (!mul_b.empty() && mul_b != mul_a) b_file = to_client(spgemm::load_matrix(mul_b));
      const sc::csr_matrix& b = b_file ? *b_file : a;
      sc::cluster_options co;
      co.connection.tls = g.tls || !g.ca_cert.empty() || !g.client_cert.empty();
      co.connection.root_cert_file = g.ca_cert;
      co.connection.client_cert_file = g.client_cert;
      co.connection.client_key_file = g.client_key;
      co.connection.token = g.token;
      co.connection.deadline = std::chrono::milliseconds(static_cast<std::int64_t>(g.timeout_s * 1e3));
      co.connection.cancel = irq.cancellation();
      irq.cleanup_from_now();
      sc::Cluster cluster(servers, co);
      sc::product_options po;
      po.algorithm = mul.algorithm;
      if (mul_panels > 0) {
        sc::panel_options pan;
        pan.panels = mul_panels;
        pan.product = po;
        sc::panel_result r = cluster.multiply_panels(a, b, pan);
        write_output(mul.output, r.matrix, irq);
        if (mul.stats) {
          for (std::size_t p = 0; p < r.panels.size(); ++p) {
            const auto& pr = r.panels[p];
            std::fprintf(stderr, "panel %zu  rows [%lld, %lld) on %s%s: %s, compute %s, nnz %s\n", p,
                         static_cast<long long>(pr.row_begin), static_cast<long long>(pr.row_end),
                         cluster.address(pr.server).c_str(), pr.attempts > 1 ? " (after failover)" : "",
                         pr.stats.algorithm().c_str(), human_duration(pr.stats.compute_ms() / 1e3).c_str(),
                         count(pr.stats.nnz()).c_str());
          }
          for (std::size_t i : r.failed_servers) std::fprintf(stderr, "server %s failed\n", cluster.address(i).c_str());
        }
      } else {
        std::size_t where = 0;
        sc::local_result r = cluster.multiply(a, b, po, &where);
        write_output(mul.output, r.matrix, irq);
        if (mul.stats) {
          std::fprintf(stderr, "server      %s\n", cluster.address(where).c_str());
          print_stats(r.stats, 0, 0, true);
        }
      }
    } else if (*multiply || *galerkin || *transpose) {
      product_args& args = *multiply ? mul : *galerkin ? gal : tr;
      check_output(args);
      // Read every file first: bad input fails before any connection.
      std::vector<operand> ops;
      if (*multiply) {
        ops.push_back(read_operand(mul_a));
        if (!mul_b.empty() && mul_b != mul_a) ops.push_back(read_operand(mul_b));
      } else if (*galerkin) {
        ops.push_back(read_operand(gal_p));
        if (gal_a != gal_p) ops.push_back(read_operand(gal_a));
      } else {
        ops.push_back(read_operand(tr_a));
      }
      irq.cleanup_from_now();
      auto& c = connect();
      std::int64_t bytes_up = 0;
      for (auto& op : ops) bytes_up += upload_operand(c, op);
      const std::string h0 = ops[0].handle;
      const std::string h1 = ops.size() > 1 ? ops[1].handle : h0;
      if (*multiply) {
        run_product(
            args, ops, bytes_up, true, irq, [&](const sc::product_options& o) { return c.multiply(h0, h1, o); },
            [&](const sc::product_options& o) { return c.multiply_kept(h0, h1, o); });
      } else if (*galerkin) {
        const auto form = gal_form == "papt" ? v1::P_A_PT : v1::PT_A_P;
        run_product(
            args, ops, bytes_up, true, irq,
            [&](const sc::product_options& o) { return c.galerkin(h0, h1, form, o); },
            [&](const sc::product_options& o) { return c.galerkin_kept(h0, h1, form, o); });
      } else {
        run_product(
            args, ops, bytes_up, false, irq, [&](const sc::product_options& o) { return c.transpose(h0, o); },
            [&](const sc::product_options& o) { return c.transpose_kept(h0, o); });
      }
    } else if (*upload) {
      std::vector<local_matrix> matrices;
      for (const auto& f : up_files) matrices.push_back(spgemm::load_matrix(f));
      irq.cleanup_from_now();
      auto& c = connect();
      for (std::size_t i = 0; i < matrices.size(); ++i) {
        progress_bar bar("upload");
        sc::upload_options o;
        o.name = up_name.empty() ? upload_name(up_files[i]) : up_name;
        o.ttl_seconds = up_ttl;
        o.on_progress = bar.callback();
        sc::RemoteMatrix m = c.upload(ref_of(matrices[i]), o);
        bar.finish();
        matrices[i] = local_matrix();
        std::printf("%s\n", m.release().c_str());
        std::fflush(stdout);
      }
    } else if (*download) {
      irq.cleanup_from_now();
      auto& c = connect();
      progress_bar bar("download");
      sc::local_result r = c.download(dl_handle, bar.callback());
      bar.finish();
      write_output(dl_output, r.matrix, irq);
    } else if (*ls) {
      auto& c = connect();
      auto list = c.list();
      int hw = 6, nw = 4;
      for (const auto& m : list) {
        hw = std::max(hw, static_cast<int>(m.handle().size()));
        nw = std::max(nw, static_cast<int>(m.name().size()));
      }
      std::printf("%-*s  %-*s %11s %11s %13s %4s %10s  %s\n", hw, "HANDLE", nw, "NAME", "ROWS", "COLS", "NNZ",
                  "TYPE", "SIZE", "WHERE");
      for (const auto& m : list) {
        std::string where = m.device();
        if (m.residency() == v1::HOST) where += " (host)";
        std::printf("%-*s  %-*s %11s %11s %13s %4s %10s  %s\n", hw, m.handle().c_str(), nw, m.name().c_str(),
                    count(m.rows()).c_str(), count(m.cols()).c_str(), count(m.nnz()).c_str(),
                    type_name(m.value_type()), human_bytes(static_cast<double>(m.bytes())).c_str(), where.c_str());
      }
    } else if (*rm) {
      auto& c = connect();
      int worst = exit_ok;
      for (const auto& h : rm_handles) {
        try {
          std::int64_t freed = c.remove(h);
          std::printf("deleted %s (%s)\n", h.c_str(), human_bytes(static_cast<double>(freed)).c_str());
        } catch (const sc::Error& e) {
          const int code = exit_code_of(e, client.get());
          if (code == exit_connection) throw;
          std::fprintf(stderr, "spgemm: rm %s: %s\n", h.c_str(), e.what());
          worst = std::max(worst, code);
        }
      }
      return worst;
    } else if (*status) {
      auto& c = connect();
      v1::ServerStatus s = c.status();
      std::printf("server      spgemmd %s, up %s\n", s.version().c_str(), human_duration(s.uptime_seconds()).c_str());
      if (!s.tenant().empty()) {
        // The token's tenant: not an admin, it sees its own part below (quotas 0: none).
        const v1::TenantQuotas& q = s.quotas();
        auto bytes = [](std::int64_t b) { return b > 0 ? human_bytes(static_cast<double>(b)) : std::string("none"); };
        auto jobs = [](std::int32_t n) { return n > 0 ? std::to_string(n) : std::string("none"); };
        std::printf("tenant      %s%s; quotas: device %s, host %s, running jobs %s, queued jobs %s\n",
                    s.tenant().c_str(), s.admin() ? " (admin: the whole server below)" : " (its own part below)",
                    bytes(q.device_bytes()).c_str(), bytes(q.host_bytes()).c_str(), jobs(q.running_jobs()).c_str(),
                    jobs(q.queued_jobs()).c_str());
      }
      std::printf("matrices    %s stored, %s spilled to host (host budget %s)\n", count(s.matrices()).c_str(),
                  human_bytes(static_cast<double>(s.host_cached_bytes())).c_str(),
                  human_bytes(static_cast<double>(s.host_budget_bytes())).c_str());
      std::printf("jobs        %d running, %d queued, %s completed, %s failed\n", s.jobs_running(), s.queue_depth(),
                  count(s.jobs_completed()).c_str(), count(s.jobs_failed()).c_str());
      for (const auto& d : s.devices()) {
        std::printf("device      %s%s%s\n", d.name().c_str(), d.description().empty() ? "" : ": ",
                    d.description().c_str());
        if (!s.admin()) {
          std::printf("            budget %s, cached %s, %d jobs running\n",
                      human_bytes(static_cast<double>(d.budget_bytes())).c_str(),
                      human_bytes(static_cast<double>(d.cached_bytes())).c_str(), d.jobs_running());
          continue;
        }
        std::printf("            budget %s, cached %s, reserved %s, peak %s, free %s of %s, %d jobs running\n",
                    human_bytes(static_cast<double>(d.budget_bytes())).c_str(),
                    human_bytes(static_cast<double>(d.cached_bytes())).c_str(),
                    human_bytes(static_cast<double>(d.reserved_bytes())).c_str(),
                    human_bytes(static_cast<double>(d.peak_bytes())).c_str(),
                    human_bytes(static_cast<double>(d.free_bytes())).c_str(),
                    human_bytes(static_cast<double>(d.total_bytes())).c_str(), d.jobs_running());
        std::printf("            %d jobs queued, %d row panels; moved %s to it, %s from it, %s from peers\n",
                    d.jobs_queued(), d.panels_in_flight(),
                    human_bytes(static_cast<double>(d.bytes_to_device())).c_str(),
                    human_bytes(static_cast<double>(d.bytes_to_host())).c_str(),
                    human_bytes(static_cast<double>(d.bytes_from_peer())).c_str());
      }
    }
  } catch (const spgemm::cli::interrupted&) {
    return report_interrupt(irq.signal());
  } catch (const cli_error& e) {
    std::fprintf(stderr, "spgemm: %s\n", e.message.c_str());
    return e.code;
  } catch (const spgemm::error& e) {  // a file or generator spec that cannot be read
    std::fprintf(stderr, "spgemm: %s\n", e.what());
    return exit_usage;
  } catch (const sc::Error& e) {
    if (irq.signal() != 0) return report_interrupt(irq.signal());
    const int code = exit_code_of(e, client.get());
    if (code == exit_connection) {
      const std::string address = client ? client->options().address : g.server;
      std::fprintf(stderr, "spgemm: cannot connect to server at %s: %s\n%s", address.c_str(), e.what(),
                   how_to_start_a_server);
    } else {
      std::fprintf(stderr, "spgemm: %s\n", e.what());
    }
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spgemm: %s\n", e.what());
    return exit_server;
  }
  return exit_ok;
}
