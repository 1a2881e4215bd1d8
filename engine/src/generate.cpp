// Spec strings: parsing them, naming inputs, loading the operands of a
// product. The generators themselves live in generate_*.cpp.
#include "spgemm/generate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "spgemm/errors.hpp"
#include "spgemm/io.hpp"
#include "spgemm/reference.hpp"
#include "src/generators.hpp"

namespace spgemm {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto p = s.find(sep);
    parts.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return parts;
    s.remove_prefix(p + 1);
  }
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The arguments of one spec, checked as they are read.
class spec_args {
 public:
  explicit spec_args(std::string_view spec) : spec_(spec), parts_(split(spec, ':')) {}

  std::size_t count() const { return parts_.size() - 1; }

  std::int64_t whole(std::size_t i, std::int64_t max) const {
    const std::string_view text = parts_[i];
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > max)
      fail("'" + std::string(text) + "' must be a whole number from 1 to " + std::to_string(max));
    return v;
  }

  // A number in [lo, hi].
  double real(std::size_t i, double lo, double hi) const {
    const std::string text(parts_[i]);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(v >= lo && v <= hi))
      fail("'" + text + "' must be a number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v;
  }

  // The optional seed after `required` arguments (1 when absent).
  std::uint64_t seed(std::size_t required) const {
    return count() > required ? static_cast<std::uint64_t>(whole(required + 1, std::int64_t{1} << 62)) : 1u;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw_bad_input("generator spec '" + std::string(spec_) + "': " + why);
  }

 private:
  std::string_view spec_;
  std::vector<std::string_view> parts_;
};

constexpr std::int64_t max_index = 2147483647;  // columns are 32-bit

struct generator {
  std::string_view kind;
  std::string_view usage;       // the arguments after "kind:"
  std::size_t required, allowed;  // argument counts
  std::function<csr_matrix<double>(const spec_args&)> make;
};

const std::vector<generator>& generators_table() {
  namespace g = generators;
  static const std::vector<generator> table = {
      {"poisson2d5", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 46340), 2, 5); }},
      {"poisson2d9", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 46340), 2, 9); }},
      {"poisson3d7", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 1290), 3, 7); }},
      {"poisson3d13", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 1290), 3, 13); }},
      {"poisson3d19", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 1290), 3, 19); }},
      {"poisson3d27", "N", 1, 1, [](const spec_args& a) { return g::poisson(a.whole(1, 1290), 3, 27); }},
      {"elasticity3d", "N", 1, 1, [](const spec_args& a) { return g::elasticity(a.whole(1, 800)); }},
      {"femblocks", "N:MAXB[:SEED]", 2, 3,
       [](const spec_args& a) { return g::fem_blocks(a.whole(1, 500), a.whole(2, 64), a.seed(2)); }},
      {"rmat", "SCALE:EDGEFACTOR[:SEED]", 2, 3,
       [](const spec_args& a) { return g::rmat(a.whole(1, 30), a.whole(2, 1024), a.seed(2)); }},
      {"kron", "SCALE:EDGEFACTOR:A:B:C[:SEED]", 5, 6,
       [](const spec_args& a) {
         const g::kronecker_params p{a.real(3, 0, 1), a.real(4, 0, 1), a.real(5, 0, 1)};
         if (p.a + p.b + p.c > 1.0) a.fail("A + B + C must not exceed 1 (D = 1 - A - B - C)");
         return g::kronecker(a.whole(1, 30), a.whole(2, 1024), p, a.seed(5));
       }},
      {"chunglu", "N:AVGDEG:EXP[:SEED]", 3, 4,
       [](const spec_args& a) {
         const std::int64_t n = a.whole(1, max_index);
         return g::chung_lu(n, a.real(2, 0.01, static_cast<double>(n) / 2), a.real(3, 1.5, 10.0), a.seed(3));
       }},
      {"er", "N:D[:SEED]", 2, 3,
       [](const spec_args& a) {
         const std::int64_t n = a.whole(1, max_index);
         return g::random_rows(n, n, a.whole(2, n), a.seed(2));
       }},
      {"band", "N:BW:D[:SEED]", 3, 4,
       [](const spec_args& a) {
         return g::random_band(a.whole(1, max_index), a.whole(2, max_index), a.whole(3, 1 << 20), a.seed(3));
       }},
      {"circuit", "N:D:K:L[:SEED]", 4, 5,
       [](const spec_args& a) {
         const std::int64_t n = a.whole(1, max_index);
         return g::circuit(n, a.whole(2, 1024), a.whole(3, n), a.whole(4, n), a.seed(4));
       }},
      {"tall", "M:N:D[:SEED]", 3, 4,
       [](const spec_args& a) {
         const std::int64_t cols = a.whole(2, max_index);
         return g::random_rows(a.whole(1, max_index), cols, a.whole(3, cols), a.seed(3));
       }},
  };
  return table;
}

const generator* find_generator(std::string_view kind) {
  for (const generator& g : generators_table())
    if (g.kind == kind) return &g;
  return nullptr;
}

struct input_suffix {
  std::string_view text;
  std::optional<product_kind> product;
  std::optional<value_type> precision;
};
const input_suffix input_suffixes[] = {{"/aat", product_kind::a_at, {}},
                                       {"/ata", product_kind::at_a, {}},
                                       {"/f32", {}, value_type::f32},
                                       {"/f64", {}, value_type::f64}};

}  // namespace

bool is_generator_spec(std::string_view spec) {
  return spec.find(':') != std::string_view::npos && find_generator(spec.substr(0, spec.find(':')));
}

csr_matrix<double> generate(std::string_view spec) {
  const spec_args args(spec);
  const std::string_view kind = spec.substr(0, spec.find(':'));
  const generator* g = find_generator(kind);
  if (!g) {
    std::string known;
    for (const generator& x : generators_table()) known += (known.empty() ? "" : ", ") + std::string(x.kind);
    throw_bad_input("unknown generator '" + std::string(kind) + "' in spec '" + std::string(spec) + "' (known: " +
                    known + ")");
  }
  if (args.count() < g->required || args.count() > g->allowed)
    args.fail("expected " + std::string(g->kind) + ":" + std::string(g->usage));
  return g->make(args);
}

csr_matrix<double> load_matrix(std::string_view spec_or_path) {
  if (is_generator_spec(spec_or_path)) return generate(spec_or_path);
  return read_matrix_market(std::string(spec_or_path));
}

std::string matrix_name(std::string_view spec_or_path) {
  if (is_generator_spec(spec_or_path)) return std::string(spec_or_path);
  auto name = spec_or_path.substr(spec_or_path.find_last_of('/') + 1);
  for (std::string_view suffix : {".mtx.gz", ".mtx"}) {
    if (ends_with(name, suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  return std::string(name);
}

product_input parse_product_input(std::string_view input, std::string_view default_b) {
  product_input in;
  std::string product_text, precision_text;  // the suffixes found, for the name
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const input_suffix& x : input_suffixes) {
      if (!ends_with(input, x.text)) continue;
      std::string& text = x.product ? product_text : precision_text;
      if (!text.empty())
        throw_bad_input("input '" + std::string(input) + "' names its " + (x.product ? "product" : "value type") +
                        " twice");
      text = x.text;
      if (x.product) in.product = *x.product;
      if (x.precision) in.precision = x.precision;
      input.remove_suffix(x.text.size());
      stripped = true;
    }
  }
  const auto comma = input.find(',');
  in.a_source = std::string(input.substr(0, comma));
  in.b_source = std::string(comma == std::string_view::npos ? default_b : input.substr(comma + 1));
  if (in.a_source.empty()) throw_bad_input("input '" + std::string(input) + "' names no matrix");
  if (!in.b_source.empty() && in.product != product_kind::a_a)
    throw_bad_input("input '" + std::string(input) + product_text + "': " + product_text +
                    " multiplies A by its own transpose, so it takes no B");
  in.name = matrix_name(in.a_source) + (in.b_source.empty() ? "" : "*" + matrix_name(in.b_source)) + product_text +
            precision_text;
  return in;
}

product_operands load_operands(const product_input& input) {
  product_operands ops;
  ops.a = load_matrix(input.a_source);
  if (!input.b_source.empty()) {
    ops.b = load_matrix(input.b_source);
  } else if (input.product == product_kind::a_at) {
    ops.b = cpu_transpose(ops.a);
  } else if (input.product == product_kind::at_a) {
    ops.b = std::move(ops.a);
    ops.a = cpu_transpose(*ops.b);
  }
  return ops;
}

}  // namespace spgemm
