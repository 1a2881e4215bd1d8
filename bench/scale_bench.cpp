// spgemm-scale-bench: products larger than a GPU and the GPUs of one server,
// end to end through a running spgemmd (bench/run_scale_device.sh starts it
// with the budget and GPUs each run needs). Two commands:
//
//   square SPEC...   A A for each operand (a generator spec or a .mtx file),
//                    kept on the server (then deleted) and streamed to this
//                    client, which counts and hashes the rows as they come
//                    (nothing is assembled: a result may pass host memory).
//   jobs             many independent products at once from several client
//                    threads, kept and deleted: jobs per second.
//
// One TSV row per measure (--tsv, appended): run, matrix, mode, measure,
// value, unit. bench/README.md says what each measure means.
#include <CLI/CLI.hpp>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "spgemm/client/client.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"
#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace {

namespace sc = spgemm::client;
namespace v1 = spgemm::v1;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

// A 64-bit hash of a byte sequence fed in pieces of any size: the same bytes
// give the same hash however the stream cut them into chunks.
class stream_hash {
 public:
  void add(const char* p, std::size_t n) {
    if (have_ > 0) {
      const std::size_t take = std::min(n, 8 - have_);
      std::memcpy(carry_ + have_, p, take);
      have_ += take;
      p += take;
      n -= take;
      if (have_ < 8) return;
      mix(carry_);
      have_ = 0;
    }
    for (; n >= 8; p += 8, n -= 8) mix(p);
    std::memcpy(carry_, p, n);
    have_ = n;
  }
  std::uint64_t value() const {
    std::uint64_t h = h_ ^ have_;
    for (std::size_t i = 0; i < have_; ++i) h = (h ^ static_cast<unsigned char>(carry_[i])) * 0x100000001b3ull;
    return h;
  }

 private:
  void mix(const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h_ = (h_ ^ w) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 29;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ull;
  char carry_[8] = {};
  std::size_t have_ = 0;
};

struct streamed {
  grpc::Status status;
  v1::MatrixHeader header;
  v1::JobStats stats;
  std::int64_t rows = 0, nnz = 0, bytes = 0;
  std::uint64_t hash = 0;            // of the row lengths, the columns and the values, in order
  std::uint64_t structure_hash = 0;  // of the row lengths and the columns alone
};

// A A streamed: every chunk counted and hashed, nothing kept.
streamed stream_square(const std::shared_ptr<grpc::Channel>& channel, const std::string& handle) {
  const grpc::internal::RpcMethod method("/spgemm.v1.Spgemm/Multiply", grpc::internal::RpcMethod::SERVER_STREAMING,
                                         channel);
  v1::MultiplyRequest req;
  req.set_a(handle);
  req.set_b(handle);
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(channel.get(), method, &ctx, req));
  streamed out;
  stream_hash lengths, columns, values;
  grpc::ByteBuffer message;
  std::vector<grpc::Slice> slices;
  spgemm::wire::chunk_pieces pieces;
  std::string offsets;
  while (reader->Read(&message)) {
    out.bytes += static_cast<std::int64_t>(message.Length());
    if (spgemm::wire::decode_chunk(message, &slices, &pieces)) {
      offsets.clear();
      for (std::string_view p : pieces.row_offsets) offsets.append(p);
      std::int64_t previous = 0;
      for (std::int64_t r = 1; r <= pieces.row_count; ++r) {
        std::int64_t o;
        std::memcpy(&o, offsets.data() + r * 8, 8);
        const std::int64_t length = o - previous;
        previous = o;
        lengths.add(reinterpret_cast<const char*>(&length), 8);
      }
      out.rows += pieces.row_count;
      out.nnz += previous;
      for (std::string_view p : pieces.col_indices) columns.add(p.data(), p.size());
      for (std::string_view p : pieces.values) values.add(p.data(), p.size());
      continue;
    }
    v1::ResultPart part;
    if (!grpc::SerializationTraits<v1::ResultPart>::Deserialize(&message, &part).ok()) continue;
    if (part.has_header()) out.header = part.header();
    if (part.has_stats()) out.stats = part.stats();
  }
  out.status = reader->Finish();
  out.structure_hash = lengths.value() ^ (columns.value() * 31);
  out.hash = out.structure_hash ^ (values.value() * 961);
  return out;
}

class report {
 public:
  report(const std::string& path, std::string run) : run_(std::move(run)) {
    if (!path.empty()) tsv_.open(path, std::ios::app);
  }
  void add(const std::string& matrix, const std::string& mode, const std::string& measure, double value,
           const std::string& unit) {
    char line[512];
    std::snprintf(line, sizeof line, "%s\t%s\t%s\t%s\t%.6g\t%s\n", run_.c_str(), matrix.c_str(), mode.c_str(),
                  measure.c_str(), value, unit.c_str());
    std::cout << line << std::flush;
    if (tsv_.is_open()) tsv_ << line << std::flush;
  }
  void note(const std::string& matrix, const std::string& mode, const std::string& measure, const std::string& text) {
    const std::string line = run_ + "\t" + matrix + "\t" + mode + "\t" + measure + "\t" + text + "\ttext\n";
    std::cout << line << std::flush;
    if (tsv_.is_open()) tsv_ << line << std::flush;
  }

 private:
  std::string run_;
  std::ofstream tsv_;
};

double csr_gb(std::int64_t rows, std::int64_t nnz) {
  return (static_cast<double>(rows + 1) * 8 + static_cast<double>(nnz) * 12) / 1e9;
}

// The most any device held (the backend's allocations) against its budget.
void device_peaks(sc::Client& client, report& out, const std::string& matrix, const std::string& mode) {
  const v1::ServerStatus status = client.status();
  for (const auto& d : status.devices()) {
    out.add(matrix, mode, "peak_over_budget:" + d.name(),
            static_cast<double>(d.peak_bytes()) / static_cast<double>(std::max<std::int64_t>(1, d.budget_bytes())),
            "ratio");
  }
}

int square(sc::Client& client, const std::shared_ptr<grpc::Channel>& channel, report& out,
           const std::vector<std::string>& specs, bool keep, bool stream) {
  int failures = 0;
  for (const std::string& spec : specs) {
    const auto t_gen = clock_type::now();
    const spgemm::csr_matrix<double> a = spgemm::load_matrix(spec);
    std::fprintf(stderr, "%s: %lld rows, %lld nnz, read in %.1f s\n", spec.c_str(), static_cast<long long>(a.rows),
                 static_cast<long long>(a.nnz()), seconds_since(t_gen));
    sc::RemoteMatrix ha = client.upload(sc::matrix_ref::of(a.rows, a.cols, a.row_offsets.data(), a.col_indices.data(),
                                                           a.values.data()));
    if (keep) {
      try {
        const auto t0 = clock_type::now();
        sc::kept_result r = client.multiply_kept(ha.handle(), ha.handle());
        const double wall = seconds_since(t0);
        const std::int64_t nnz = r.matrix.info().nnz();
        out.add(spec, "kept", "wall", wall, "s");
        out.add(spec, "kept", "compute", r.stats.compute_ms() / 1e3, "s");
        out.add(spec, "kept", "gflops", r.stats.flops() / wall / 1e9, "GFLOPS");
        out.add(spec, "kept", "gflops_compute", r.stats.gflops(), "GFLOPS");
        out.add(spec, "kept", "result_gbps", csr_gb(a.rows, nnz) / wall, "GB/s");
        out.add(spec, "kept", "nnz", static_cast<double>(nnz), "entries");
        out.add(spec, "kept", "flops", r.stats.flops(), "flop");
        out.note(spec, "kept", "where", r.matrix.info().residency() == v1::HOST ? "host" : r.matrix.info().device());
        out.note(spec, "kept", "method", r.stats.algorithm());
        device_peaks(client, out, spec, "kept");
        r.matrix.remove();
      } catch (const std::exception& e) {
        out.note(spec, "kept", "failed", e.what());
        ++failures;
      }
    }
    if (stream) {
      const auto t0 = clock_type::now();
      const streamed s = stream_square(channel, ha.handle());
      const double wall = seconds_since(t0);
      if (!s.status.ok()) {
        out.note(spec, "streamed", "failed", s.status.error_message());
        ++failures;
        continue;
      }
      out.add(spec, "streamed", "wall", wall, "s");
      out.add(spec, "streamed", "compute", s.stats.compute_ms() / 1e3, "s");
      out.add(spec, "streamed", "gflops", s.stats.flops() / wall / 1e9, "GFLOPS");
      out.add(spec, "streamed", "result_gbps", csr_gb(s.rows, s.nnz) / wall, "GB/s");
      out.add(spec, "streamed", "wire_gbps", static_cast<double>(s.bytes) / 1e9 / wall, "GB/s");
      out.add(spec, "streamed", "nnz", static_cast<double>(s.nnz), "entries");
      out.add(spec, "streamed", "header_nnz", static_cast<double>(s.header.nnz()), "entries");
      char hash[32];
      std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.hash));
      out.note(spec, "streamed", "hash", hash);
      std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.structure_hash));
      out.note(spec, "streamed", "structure_hash", hash);
      out.note(spec, "streamed", "method", s.stats.algorithm());
      device_peaks(client, out, spec, "streamed");
    }
  }
  return failures;
}

int jobs(sc::Client& client, report& out, const std::string& spec, int operands, int count, int clients) {
  std::vector<sc::RemoteMatrix> stored;
  for (int i = 0; i < operands; ++i) {
    const spgemm::csr_matrix<double> a = spgemm::load_matrix(spec + ":" + std::to_string(i + 1));
    stored.push_back(client.upload(
        sc::matrix_ref::of(a.rows, a.cols, a.row_offsets.data(), a.col_indices.data(), a.values.data())));
  }
  std::atomic<int> next{0}, failed{0};
  std::atomic<double> flops{0};
  const auto t0 = clock_type::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        try {
          const std::string& h = stored[static_cast<std::size_t>(i % operands)].handle();
          sc::kept_result r = client.multiply_kept(h, h);
          double f = flops.load();
          while (!flops.compare_exchange_weak(f, f + r.stats.flops())) {
          }
          r.matrix.remove();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "job %d: %s\n", i, e.what());
          ++failed;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double wall = seconds_since(t0);
  const std::string what = spec + " x" + std::to_string(count);
  out.add(what, "jobs", "wall", wall, "s");
  out.add(what, "jobs", "jobs_per_s", (count - failed) / wall, "jobs/s");
  out.add(what, "jobs", "gflops", flops.load() / wall / 1e9, "GFLOPS");
  out.add(what, "jobs", "failed_jobs", failed, "jobs");
  const v1::ServerStatus status = client.status();
  for (const auto& d : status.devices()) {
    out.add(what, "jobs", "bytes_from_peer:" + d.name(), static_cast<double>(d.bytes_from_peer()), "B");
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spgemm-scale-bench: products larger than a GPU, and the GPUs of one server, through spgemmd"};
  std::string server = "127.0.0.1:50051", tsv, run = "run";
  app.add_option("--server", server, "spgemmd's address");
  app.add_option("--tsv", tsv, "append the rows to this TSV file");
  app.add_option("--run", run, "the run's name in the first column (e.g. 'h100 budget 40 GB')");
  auto* sq = app.add_subcommand("square", "A A, kept and streamed, for each operand");
  std::vector<std::string> specs;
  bool keep_only = false, stream_only = false;
  sq->add_option("specs", specs, "generator specs or .mtx files")->required();
  sq->add_flag("--kept-only", keep_only, "only kept");
  sq->add_flag("--streamed-only", stream_only, "only streamed");
  auto* jb = app.add_subcommand("jobs", "independent products from several client threads");
  std::string job_spec = "rmat:16:16";
  int operands = 16, count = 100, clients = 8;
  jb->add_option("--matrix", job_spec, "operand spec; ':<seed>' is appended for each operand");
  jb->add_option("--operands", operands, "distinct operands, uploaded first");
  jb->add_option("--jobs", count, "products in all");
  jb->add_option("--clients", clients, "client threads");
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);

  sc::connection_options options;
  options.address = server;
  sc::Client client(options);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  const auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  report out(tsv, run);
  try {
    if (*sq) return square(client, channel, out, specs, !stream_only, !keep_only) == 0 ? 0 : 1;
    return jobs(client, out, job_spec, operands, count, clients);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spgemm-scale-bench: %s\n", e.what());
    return 1;
  }
}
