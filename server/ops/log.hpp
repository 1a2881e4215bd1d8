// Structured logs: one line per event on stderr, as key=value text or JSON.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace spgemmd {

enum class log_format { text, json };
void set_log_format(log_format f);

// A field's value, already rendered; numbers stay unquoted in JSON.
struct log_value {
  log_value(std::string_view s) : text(s) {}
  log_value(const std::string& s) : text(s) {}
  log_value(const char* s) : text(s) {}
  log_value(bool b) : text(b ? "true" : "false"), number(true) {}
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  log_value(N n) : text(std::to_string(n)), number(true) {}
  std::string text;
  bool number = false;
};

using log_fields = std::initializer_list<std::pair<std::string_view, log_value>>;

// level: "info", "warn", "error".
void log_event(std::string_view level, std::string_view event, log_fields fields = {});

}  // namespace spgemmd
