#include "ops/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace spgemmd {

namespace {

std::atomic<log_format> format{log_format::text};
std::mutex output_mutex;

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void append_text_value(std::string& out, std::string_view s) {
  const bool plain = !s.empty() && s.find_first_of(" \"=\n\t") == std::string_view::npos;
  if (plain) {
    out += s;
  } else {
    append_json_string(out, s);  // quoted and escaped
  }
}

}  // namespace

void set_log_format(log_format f) { format = f; }

void log_event(std::string_view level, std::string_view event, log_fields fields) {
  std::string line;
  if (format.load() == log_format::json) {
    line += "{\"ts\":";
    append_json_string(line, timestamp());
    line += ",\"level\":";
    append_json_string(line, level);
    line += ",\"event\":";
    append_json_string(line, event);
    for (const auto& [key, value] : fields) {
      line += ',';
      append_json_string(line, key);
      line += ':';
      if (value.number) {
        line += value.text;
      } else {
        append_json_string(line, value.text);
      }
    }
    line += "}\n";
  } else {
    line += timestamp();
    line += " level=";
    line += level;
    line += " event=";
    line += event;
    for (const auto& [key, value] : fields) {
      line += ' ';
      line += key;
      line += '=';
      append_text_value(line, value.text);
    }
    line += '\n';
  }
  std::lock_guard<std::mutex> lock(output_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace spgemmd
