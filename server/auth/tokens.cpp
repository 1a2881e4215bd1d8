#include "auth/tokens.hpp"

#include <openssl/evp.h>

#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace spgemmd::auth {

namespace {

constexpr std::size_t min_token_length = 16;
constexpr std::size_t max_tenant_length = 64;

struct line_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool valid_tenant(std::string_view t) {
  if (t.empty() || t.size() > max_tenant_length) return false;
  for (const char c : t) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// Bytes: a number, or one with a KiB, MiB, GiB or TiB suffix.
std::size_t parse_bytes(const std::string& key, const std::string& value) {
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  const std::string unit = value.substr(digits);
  unsigned shift = 0;
  if (unit == "KiB") {
    shift = 10;
  } else if (unit == "MiB") {
    shift = 20;
  } else if (unit == "GiB") {
    shift = 30;
  } else if (unit == "TiB") {
    shift = 40;
  } else if (!unit.empty()) {
    throw line_error(key + "=" + value + ": give bytes, or a number with KiB, MiB, GiB or TiB");
  }
  if (digits == 0 || digits > 15) throw line_error(key + "=" + value + ": not a byte count");
  const unsigned long long n = std::stoull(value.substr(0, digits));
  if (n > (std::numeric_limits<unsigned long long>::max() >> shift)) throw line_error(key + "=" + value + ": too large");
  return static_cast<std::size_t>(n << shift);
}

int parse_count(const std::string& key, const std::string& value) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) {
    throw line_error(key + "=" + value + ": not a count");
  }
  return std::stoi(value);
}

void apply_option(const std::string& option, core::caller* c) {
  if (option == "admin") {
    c->admin = true;
    return;
  }
  const auto eq = option.find('=');
  const std::string key = option.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
  if (eq != std::string::npos && key == "device_bytes") {
    c->limits.device_bytes = parse_bytes(key, value);
  } else if (eq != std::string::npos && key == "host_bytes") {
    c->limits.host_bytes = parse_bytes(key, value);
  } else if (eq != std::string::npos && key == "running_jobs") {
    c->limits.running_jobs = parse_count(key, value);
  } else if (eq != std::string::npos && key == "queued_jobs") {
    c->limits.queued_jobs = parse_count(key, value);
  } else {
    throw line_error("unknown option '" + option +
                     "' (known: admin, device_bytes=SIZE, host_bytes=SIZE, running_jobs=N, queued_jobs=N)");
  }
}

bool same_options(const core::caller& a, const core::caller& b) {
  return a.admin == b.admin && a.limits.device_bytes == b.limits.device_bytes &&
         a.limits.host_bytes == b.limits.host_bytes && a.limits.running_jobs == b.limits.running_jobs &&
         a.limits.queued_jobs == b.limits.queued_jobs;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

token_table::digest token_table::sha256(std::string_view bytes) {
  digest d{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), d.data(), &length, EVP_sha256(), nullptr) != 1 || length != d.size()) {
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  }
  return d;
}

token_table token_table::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the tokens file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

token_table token_table::parse(std::string_view text, const std::string& where) {
  token_table table;
  std::map<std::string, core::caller> tenants;  // each tenant's options, as its first line gave them
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    try {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string word; words >> word;) w.push_back(word);
      if (w.empty() || w[0][0] == '#') continue;
      if (w.size() < 2) throw line_error("a token needs a tenant: TOKEN TENANT [OPTIONS]");
      digest d{};
      if (w[0].rfind("sha256:", 0) == 0) {
        const std::string hex = w[0].substr(7);
        if (hex.size() != 64) throw line_error("sha256: takes the 64 hex digits of the token's SHA-256");
        for (std::size_t i = 0; i < d.size(); ++i) {
          const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
          if (hi < 0 || lo < 0) throw line_error("sha256: takes hex digits only");
          d[i] = static_cast<unsigned char>(hi * 16 + lo);
        }
      } else {
        if (w[0].size() < min_token_length) {
          throw line_error("a token must have at least " + std::to_string(min_token_length) + " characters");
        }
        d = sha256(w[0]);
      }
      core::caller c;
      c.tenant = w[1];
      if (!valid_tenant(c.tenant)) {
        throw line_error("tenant '" + c.tenant + "': use letters, digits, '.', '_' and '-' (at most " +
                         std::to_string(max_tenant_length) + ")");
      }
      for (std::size_t i = 2; i < w.size(); ++i) apply_option(w[i], &c);
      if (auto [it, added] = tenants.emplace(c.tenant, c); !added && !same_options(it->second, c)) {
        throw line_error("tenant '" + c.tenant + "' has other options on an earlier line; give every token of a "
                         "tenant the same options");
      }
      if (!table.callers_.emplace(d, std::move(c)).second) throw line_error("this token is given twice");
    } catch (const line_error& e) {
      throw std::runtime_error(where + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (table.callers_.empty()) throw std::runtime_error(where + ": no tokens: every call would be refused");
  return table;
}

const core::caller* token_table::find(std::string_view token) const {
  auto it = callers_.find(sha256(token));
  return it == callers_.end() ? nullptr : &it->second;
}

}  // namespace spgemmd::auth
