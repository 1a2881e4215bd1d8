// spgemm-e2e-bench: C = A·A end to end through spgemmd from the C++ client,
// per path: the wire over loopback TCP (cpp-tcp) and the Unix socket
// (cpp-unix), and shared memory (cpp-shm); plus each path's download alone
// (C kept on the server, then fetched: the wire's decode rate, or the rate of
// a result written into the region and copied out of it).
// Rows in the columns of bench/e2e_bench.py (bench/README.md), so that both
// fill one table (bench/results/h100-e2e.tsv). Every path's C must equal the
// first path's, entry for entry.
//
//   spgemm-e2e-bench --tcp HOST:PORT --unix unix:///path INPUT... [--repeats 5] [--tsv out.tsv]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "spgemm/client/client.hpp"
#include "spgemm/generate.hpp"

namespace {

namespace sc = spgemm::client;

struct path {
  std::string name;
  std::string address;
  sc::transfer_mode mode;
};

struct timing {
  double median_ms = 0, min_ms = 0;
};

timing time_it(int repeats, const std::function<void()>& run) {
  run();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

bool same(const sc::csr_matrix& a, const sc::csr_matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_offsets == b.row_offsets && a.col_indices == b.col_indices &&
         a.values == b.values;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"C = A*A end to end through spgemmd from the C++ client, per path (TCP, Unix socket, shared memory)"};
  std::vector<std::string> inputs;
  std::string tcp, unix_address, tsv_path, gpu = "cpu";
  int repeats = 5;
  app.add_option("inputs", inputs, ".mtx/.mtx.gz files or generator specs (poisson3d7:N, rmat:S:E, ...)")->required();
  app.add_option("--tcp", tcp, "HOST:PORT of the server")->required();
  app.add_option("--unix", unix_address, "unix:///path of the same server's socket")->required();
  app.add_option("--repeats", repeats, "timed calls per path (median reported)");
  app.add_option("--tsv", tsv_path, "write the rows here too");
  app.add_option("--gpu", gpu, "the GPU's name for the gpu column");
  CLI11_PARSE(app, argc, argv);

  const std::vector<path> paths = {{"cpp-tcp", tcp, sc::transfer_mode::wire},
                                   {"cpp-unix", unix_address, sc::transfer_mode::wire},
                                   {"cpp-shm", unix_address, sc::transfer_mode::shared_memory}};
  std::ofstream tsv;
  if (!tsv_path.empty()) {
    tsv.open(tsv_path);
    tsv << "gpu\tmatrix\trows\tnnz_a\tnnz_c\tpath\tms\tmin_ms\tresult_gbps\tserver_ms\tstatus\n";
  }
  int failures = 0;
  for (const std::string& input : inputs) {
    const spgemm::product_input in = spgemm::parse_product_input(input);
    const spgemm::csr_matrix<double> e = spgemm::load_operands(in).a;
    sc::csr_matrix a;
    a.rows = e.rows;
    a.cols = e.cols;
    a.row_offsets = e.row_offsets;
    a.col_indices = e.col_indices;
    a.values = e.values;
    sc::csr_matrix first;
    bool have_first = false;
    auto emit = [&](const std::string& name, std::int64_t nnz_c, const timing* t, double server_ms,
                    const std::string& status) {
      char line[512];
      const double gbps = t ? (8.0 * static_cast<double>(a.rows + 1) + 12.0 * static_cast<double>(nnz_c)) /
                                  t->median_ms / 1e6
                            : 0;
      std::snprintf(line, sizeof line, "%s\t%s\t%lld\t%lld\t%lld\t%s\t%s\t%s\t%s\t%s\t%s", gpu.c_str(),
                    in.name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.nnz()),
                    static_cast<long long>(nnz_c), name.c_str(), t ? std::to_string(t->median_ms).c_str() : "NA",
                    t ? std::to_string(t->min_ms).c_str() : "NA", t ? std::to_string(gbps).c_str() : "NA",
                    server_ms >= 0 ? std::to_string(server_ms).c_str() : "NA", status.c_str());
      std::puts(line);
      std::fflush(stdout);
      if (tsv) tsv << line << "\n" << std::flush;
    };
    for (const path& p : paths) {
      try {
        sc::connection_options o;
        o.address = p.address;
        o.transfer = p.mode;
        o.deadline = std::chrono::minutes(10);
        sc::Client client(o);
        sc::local_result c;
        const timing t = time_it(repeats, [&] {
          sc::RemoteMatrix ra = client.upload(a);
          c = client.multiply(ra.handle(), ra.handle());
        });
        std::string status = "ok";
        if (!have_first) {
          first = c.matrix;
          have_first = true;
        } else if (!same(c.matrix, first)) {
          status = "mismatch: differs from " + paths.front().name;
          ++failures;
        }
        emit(p.name, c.matrix.nnz(), &t, c.stats.compute_ms(), status);
        {  // the download alone (into the result region for cpp-shm)
          sc::RemoteMatrix ra = client.upload(a);
          sc::kept_result kept = client.multiply_kept(ra.handle(), ra.handle());
          sc::local_result d;
          const timing td = time_it(repeats, [&] { d = client.download(kept.matrix.handle()); });
          emit(p.name + "-download", d.matrix.nnz(), &td, -1, same(d.matrix, first) ? "ok" : "mismatch");
        }
      } catch (const std::exception& ex) {
        emit(p.name, 0, nullptr, -1, std::string("failed: ") + ex.what());
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
