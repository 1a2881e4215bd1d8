// The graph calls of spgemmd (spgemm.v1.Graph) with GraphBLAS-like names:
// products over semirings and masked products (mxm), and the steps between
// products. Each keeps its result on the server (a RemoteMatrix, deleted
// when it goes) so that an algorithm chains them there; Client::download
// fetches one. Operands are handles, taken as they are or transposed.
//
//   spgemm::client::Graph g(client);
//   auto l = g.select(a.handle(), "tril", -1);                       // strictly lower
//   auto c = g.mxm(l.matrix.handle(), l.matrix.handle(), {"plus_pair", mask_of(l.matrix.handle())});
//   auto t = g.reduce_scalar(c.matrix.handle());                     // the triangles
//
// Names (semirings, operators, selectors, monoids) are docs/graph.md's;
// an unknown one is Error(INVALID_ARGUMENT) listing the known ones.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spgemm/client/client.hpp"

namespace spgemm::client {

// A stored matrix as an operand: its handle, as it is or transposed.
struct operand {
  std::string handle;
  bool transposed = false;

  operand(std::string h, bool t = false) : handle(std::move(h)), transposed(t) {}  // NOLINT: handles convert
  operand(const char* h) : handle(h) {}                                          // NOLINT
  operand(const RemoteMatrix& m) : handle(m.handle()) {}                           // NOLINT
};
inline operand transposed(const std::string& handle) { return {handle, true}; }

struct mask {
  operand matrix;
  bool complement = false;  // C<!M>
  bool values = false;      // only M's entries of nonzero value count
};

struct mxm_options {
  std::string semiring;  // empty: plus_times
  std::optional<mask> within;
  product_options product;  // algorithm, output type, priority, the result's name
};

// What every step takes besides its operands: priority and the kept result's name.
struct step_options {
  int priority = 0;
  std::string name;
  progress_callback on_progress;
};

class Graph {
 public:
  explicit Graph(Client& client);
  ~Graph();

  kept_result mxm(const operand& a, const operand& b, const mxm_options& options = {});
  // Union (op where both have an entry; empty: plus) and intersection (empty: times).
  kept_result ewise_add(const operand& a, const operand& b, const std::string& op = "", const step_options& o = {});
  kept_result ewise_mult(const operand& a, const operand& b, const std::string& op = "", const step_options& o = {});
  // A unary operator (abs, ainv, minv, lnot, one, sqrt, exp, log, identity) ...
  kept_result apply(const operand& a, const std::string& op, const step_options& o = {});
  // ... or a binary one with a bound scalar: a_ij op s (s op a_ij where scalar_first).
  kept_result apply(const operand& a, const std::string& op, double scalar, bool scalar_first = false,
                    const step_options& o = {});
  kept_result select(const operand& a, const std::string& selector, double thunk = 0, const step_options& o = {});
  kept_result top_k(const operand& a, std::int64_t k, bool columns = false, const step_options& o = {});
  // Monoid names, or "count"; empty: plus.
  kept_result reduce_rowwise(const operand& a, const std::string& monoid = "", const step_options& o = {});
  kept_result reduce_columnwise(const operand& a, const std::string& monoid = "", const step_options& o = {});
  kept_result reduce_scalar(const operand& a, const std::string& monoid = "", const step_options& o = {});
  // diag(v) A and A diag(v) (op: empty for times).
  kept_result scale_rows(const operand& a, const operand& v, const std::string& op = "", const step_options& o = {});
  kept_result scale_columns(const operand& a, const operand& v, const std::string& op = "",
                            const step_options& o = {});
  kept_result extract_rows(const operand& a, const std::vector<std::int64_t>& rows, const step_options& o = {});

 private:
  struct methods;
  std::shared_ptr<detail::channel> channel_;
  std::unique_ptr<methods> methods_;
};

}  // namespace spgemm::client
