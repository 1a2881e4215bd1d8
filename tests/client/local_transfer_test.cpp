// The C++ client's paths to a server on the same host: TCP and a Unix
// socket, each over the wire and through shared memory, give equal results;
// shared memory is refused where the server turned it off.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "spgemm/client/client.hpp"
#include "spgemm/reference.hpp"
#include "test_server.hpp"

namespace spgemm::client_test {
namespace {

namespace sc = spgemm::client;
namespace v1 = spgemm::v1;

// A rows x cols matrix with about `per_row` entries a row.
sc::csr_matrix random(std::int64_t rows, std::int64_t cols, int per_row, unsigned seed) {
  sc::csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  unsigned x = seed;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t c = (x = x * 1103515245u + 12345u) % 7;
    for (int k = 0; k < per_row && c < cols; ++k) {
      m.col_indices.push_back(static_cast<std::int32_t>(c));
      m.values.push_back(static_cast<double>((x = x * 1103515245u + 12345u) % 1000) / 500.0 - 1.0);
      c += 1 + (x >> 8) % static_cast<unsigned>(2 * cols / per_row);
    }
    m.row_offsets.push_back(static_cast<std::int64_t>(m.col_indices.size()));
  }
  return m;
}

sc::Client connect(const std::string& address, sc::transfer_mode mode) {
  sc::connection_options o;
  o.address = address;
  o.deadline = std::chrono::seconds(120);
  o.transfer = mode;
  return sc::Client(o);
}

void expect_same(const sc::csr_matrix& a, const sc::csr_matrix& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.col_indices, b.col_indices);
  EXPECT_EQ(a.values, b.values);
}

TEST(LocalTransfer, EveryPathGivesTheSameResults) {
  spgemmd_process server;
  const std::string socket = scratch_path("paths.sock");
  ASSERT_EQ(server.start({"--backend=cpu", "--unix_socket=" + socket}), "");
  const sc::csr_matrix a = random(3000, 2500, 12, 1), p = random(2500, 300, 3, 2), s = random(2500, 2500, 8, 3);
  std::map<std::string, sc::local_result> first;
  for (const std::string& address : {server.address(), "unix://" + socket}) {
    for (const auto mode : {sc::transfer_mode::wire, sc::transfer_mode::shared_memory}) {
      SCOPED_TRACE(address + (mode == sc::transfer_mode::wire ? " wire" : " shared memory"));
      auto client = connect(address, mode);
      EXPECT_EQ(client.transfer(), mode == sc::transfer_mode::wire ? "wire" : "shared_memory");
      auto ra = client.upload(a);
      auto rp = client.upload(p);
      auto rs = client.upload(s);
      std::map<std::string, sc::local_result> got;
      got["download"] = client.download(ra.handle());
      got["product"] = client.multiply(ra.handle(), rp.handle());
      got["transpose"] = client.transpose(ra.handle());
      got["galerkin"] = client.galerkin(rp.handle(), rs.handle(), v1::PT_A_P);
      auto kept = client.multiply_kept(ra.handle(), rp.handle());
      got["kept"] = client.download(kept.matrix.handle());
      expect_same(got["download"].matrix, a);
      expect_same(got["kept"].matrix, got["product"].matrix);
      if (first.empty()) {
        first = std::move(got);
        const auto ref = spgemm::cpu_multiply(
            spgemm::csr_matrix<double>{a.rows, a.cols, a.row_offsets, a.col_indices, a.values},
            spgemm::csr_matrix<double>{p.rows, p.cols, p.row_offsets, p.col_indices, p.values}, 1);
        EXPECT_EQ(first["product"].matrix.col_indices, ref.col_indices);
      } else {
        for (const auto& [what, r] : got) {
          SCOPED_TRACE(what);
          expect_same(r.matrix, first[what].matrix);
        }
      }
    }
  }
}

TEST(LocalTransfer, AResultLargerThanTheResultRegionIsKeptThenDownloaded) {
  spgemmd_process server;
  ASSERT_EQ(server.start({"--backend=cpu"}), "");
  auto client = connect(server.address(), sc::transfer_mode::shared_memory);
  // A^2: ~5M entries, 60 MB (the region starts at 16 MiB); its arrays are
  // copied out of the region on several threads (where there are cores).
  const sc::csr_matrix a = random(80000, 80000, 8, 3);
  auto ra = client.upload(a);
  const auto shm = client.multiply(ra.handle(), ra.handle());
  ASSERT_GT(shm.matrix.nnz() * 8, std::int64_t{32} << 20);
  auto wire = connect(server.address(), sc::transfer_mode::wire);
  expect_same(shm.matrix, wire.multiply(ra.handle(), ra.handle()).matrix);
  EXPECT_EQ(client.list().size(), 1u);  // only A: the kept product went
  // Again, into the region grown by the first call (read into fresh vectors).
  expect_same(client.multiply(ra.handle(), ra.handle()).matrix, shm.matrix);
}

TEST(LocalTransfer, LargeDownloadsThroughSharedMemoryEqualTheWire) {
  spgemmd_process server;
  ASSERT_EQ(server.start({"--backend=cpu"}), "");
  auto shm = connect(server.address(), sc::transfer_mode::shared_memory);
  auto wire = connect(server.address(), sc::transfer_mode::wire);
  // ~4.8M entries: every array over 8 MiB, so copied into the upload region
  // and out of the result region on several threads (where there are cores).
  const sc::csr_matrix a = random(1200000, 1200000, 4, 7);
  ASSERT_GT(a.row_offsets.size() * sizeof(std::int64_t), std::size_t{8} << 20);
  const std::vector<float> narrow(a.values.begin(), a.values.end());
  auto r64 = shm.upload(a);
  auto r32 = shm.upload(sc::matrix_ref::of(a.rows, a.cols, a.row_offsets.data(), a.col_indices.data(), narrow.data()));
  const auto got64 = shm.download(r64.handle()), got32 = shm.download(r32.handle());
  EXPECT_EQ(got32.value_type, v1::FLOAT32);
  expect_same(got64.matrix, a);
  expect_same(got64.matrix, wire.download(r64.handle()).matrix);
  expect_same(got32.matrix, wire.download(r32.handle()).matrix);
}

TEST(LocalTransfer, CompressedMessagesGiveTheSameResults) {
  spgemmd_process server;
  ASSERT_EQ(server.start({"--backend=cpu"}), "");
  sc::connection_options o;
  o.address = server.address();
  o.transfer = sc::transfer_mode::wire;
  o.compression = "gzip";
  sc::Client zipped(o);
  auto plain = connect(server.address(), sc::transfer_mode::wire);
  const sc::csr_matrix a = random(2000, 2000, 10, 6);
  auto ra = zipped.upload(a);
  expect_same(zipped.download(ra.handle()).matrix, a);
  expect_same(zipped.multiply(ra.handle(), ra.handle()).matrix, plain.multiply(ra.handle(), ra.handle()).matrix);
  o.compression = "lzma";
  EXPECT_THROW(sc::Client{o}, sc::Error);
}

TEST(LocalTransfer, AServerWithoutSharedMemoryRefusesItAndAutomaticTakesTheWire) {
  spgemmd_process server;
  ASSERT_EQ(server.start({"--backend=cpu", "--shared_memory=false"}), "");
  auto automatic = connect(server.address(), sc::transfer_mode::automatic);
  EXPECT_EQ(automatic.transfer(), "wire");
  auto ra = automatic.upload(random(100, 100, 4, 4));
  EXPECT_EQ(automatic.multiply(ra.handle(), ra.handle()).matrix.rows, 100);
  auto forced = connect(server.address(), sc::transfer_mode::shared_memory);
  try {
    forced.upload(random(10, 10, 2, 5));
    FAIL() << "shared memory was not refused";
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
}

}  // namespace
}  // namespace spgemm::client_test
