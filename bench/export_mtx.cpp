// spgemm-export-mtx: writes the operands spgemm-bench multiplies for each
// input (generator spec or file, with its /aat, /ata, /f32 suffixes) as
// general real Matrix Market files, so that other libraries multiply the same
// matrices (bench/peer_runs.py). See bench/README.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"

namespace {

// A file name from a matrix name: "er:1000:8/f32" -> "007-er_1000_8_f32".
std::string file_stem(std::size_t index, const std::string& name) {
  std::string stem = std::to_string(index);
  stem.insert(0, 3 - std::min<std::size_t>(3, stem.size()), '0');
  stem += '-';
  for (const char c : name) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return stem;
}

struct exported {
  std::string line;  // the manifest line, or "" where the input failed
  std::string problem;
};

exported export_input(const std::string& input, std::size_t index, const std::filesystem::path& dir) {
  try {
    const spgemm::product_input in = spgemm::parse_product_input(input);
    const spgemm::product_operands ops = spgemm::load_operands(in);
    const std::string stem = (dir / file_stem(index, in.name)).string();
    spgemm::write_matrix_market(stem + ".A.mtx", ops.a);
    std::string b_path = stem + ".A.mtx";
    if (ops.b) {
      b_path = stem + ".B.mtx";
      spgemm::write_matrix_market(b_path, *ops.b);
    }
    const std::string precision = in.precision == spgemm::value_type::f32 ? "f32" : "f64";
    return {in.name + '\t' + precision + '\t' + stem + ".A.mtx\t" + b_path, ""};
  } catch (const std::exception& e) {
    return {"", input + ": " + e.what()};
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string dir, manifest;
  int threads = 0;
  CLI::App app{"spgemm-export-mtx: writes the operands of spgemm-bench's inputs as Matrix Market files"};
  app.add_option("inputs", inputs, "generator specs or Matrix Market files, with spgemm-bench's suffixes")->required();
  app.add_option("--dir", dir, "folder for the .mtx files (created)")->required();
  app.add_option("--manifest", manifest,
                 "write 'name<TAB>precision<TAB>A.mtx<TAB>B.mtx' per input here (default: stdout)");
  app.add_option("--threads", threads, "inputs written at once (0: one per hardware thread)")
      ->check(CLI::Range(0, 4096));
  CLI11_PARSE(app, argc, argv);

  std::filesystem::create_directories(dir);
  std::vector<exported> results(inputs.size());
  std::atomic<std::size_t> next{0};
  const unsigned workers =
      threads > 0 ? static_cast<unsigned>(threads) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::size_t>(workers, inputs.size()); ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < inputs.size();) results[i] = export_input(inputs[i], i, dir);
    });
  for (auto& t : pool) t.join();

  std::ofstream file;
  if (!manifest.empty()) file.open(manifest);
  std::ostream& out = manifest.empty() ? std::cout : file;
  int failed = 0;
  for (const exported& r : results) {
    if (!r.line.empty()) out << r.line << '\n';
    if (!r.problem.empty()) {
      std::cerr << "spgemm-export-mtx: " << r.problem << '\n';
      ++failed;
    }
  }
  return failed ? 1 : 0;
}
