#include "spgemm/semiring.hpp"

#include <array>
#include <utility>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

constexpr std::array<std::pair<binary_op, std::string_view>, 21> binary_names = {{
    {binary_op::first, "first"}, {binary_op::second, "second"}, {binary_op::pair, "pair"},
    {binary_op::plus, "plus"},   {binary_op::minus, "minus"},   {binary_op::rminus, "rminus"},
    {binary_op::times, "times"}, {binary_op::div, "div"},       {binary_op::rdiv, "rdiv"},
    {binary_op::min, "min"},     {binary_op::max, "max"},       {binary_op::pow, "pow"},
    {binary_op::land, "land"},   {binary_op::lor, "lor"},       {binary_op::lxor, "lxor"},
    {binary_op::eq, "eq"},       {binary_op::ne, "ne"},         {binary_op::gt, "gt"},
    {binary_op::ge, "ge"},       {binary_op::lt, "lt"},         {binary_op::le, "le"},
}};

constexpr std::array<std::pair<monoid, std::string_view>, 8> monoid_table = {{
    {monoid::plus, "plus"}, {monoid::times, "times"}, {monoid::min, "min"},   {monoid::max, "max"},
    {monoid::lor, "lor"},   {monoid::land, "land"},   {monoid::lxor, "lxor"}, {monoid::any, "any"},
}};

template <typename Table>
std::string known_names(const Table& table) {
  std::string list;
  for (const auto& entry : table) list += (list.empty() ? "" : ", ") + std::string(entry.second);
  return list;
}

template <typename Table>
auto find_name(const Table& table, std::string_view name, const char* what) {
  for (const auto& entry : table)
    if (entry.second == name) return entry.first;
  throw_bad_input("unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + known_names(table) + ")");
}

template <typename Table, typename Value>
std::string_view name_of(const Table& table, Value v) {
  for (const auto& entry : table)
    if (entry.first == v) return entry.second;
  return "unknown";
}

bool gives_truth_values(binary_op op) {
  switch (op) {
    case binary_op::land:
    case binary_op::lor:
    case binary_op::lxor:
    case binary_op::pair:
    case binary_op::eq:
    case binary_op::ne:
    case binary_op::gt:
    case binary_op::ge:
    case binary_op::lt:
    case binary_op::le: return true;
    default: return false;
  }
}

}  // namespace

std::string_view to_string(binary_op op) { return name_of(binary_names, op); }
std::string_view to_string(monoid m) { return name_of(monoid_table, m); }
std::string to_string(const semiring& s) { return std::string(to_string(s.add)) + "_" + std::string(to_string(s.multiply)); }

binary_op parse_binary_op(std::string_view name) { return find_name(binary_names, name, "operator"); }
monoid parse_monoid(std::string_view name) { return find_name(monoid_table, name, "monoid"); }

semiring parse_semiring(std::string_view name) {
  if (name.empty()) return {};
  const std::size_t cut = name.find('_');
  if (cut == std::string_view::npos) {
    throw_bad_input("unknown semiring '" + std::string(name) + "': a monoid (" + known_names(monoid_table) +
                    "), '_', then an operator (" + known_names(binary_names) + "), e.g. min_plus");
  }
  semiring s;
  try {
    s = {parse_monoid(name.substr(0, cut)), parse_binary_op(name.substr(cut + 1))};
  } catch (const error& e) {
    throw_bad_input("semiring '" + std::string(name) + "': " + e.what());
  }
  check_semiring(s);
  return s;
}

void check_semiring(const semiring& s) {
  const bool logical = s.add == monoid::lor || s.add == monoid::land || s.add == monoid::lxor;
  if (logical && !gives_truth_values(s.multiply)) {
    throw_bad_input("semiring " + to_string(s) + ": the monoid " + std::string(to_string(s.add)) +
                    " takes an operator whose results are 1 or 0 (land, lor, lxor, pair, eq, ne, gt, ge, lt, le)");
  }
}

std::vector<std::string_view> binary_op_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : binary_names) names.push_back(entry.second);
  return names;
}

std::vector<std::string_view> monoid_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : monoid_table) names.push_back(entry.second);
  return names;
}

}  // namespace spgemm
