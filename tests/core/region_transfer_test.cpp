// Matrices written into regions (core/region_transfer.hpp), read back as the
// client reads them; CUDA IPC refused without a GPU. (A kept product in row
// panels, several host blocks, goes into a region in panels_cpu_test.cpp.)
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>
#include <variant>

#include "core/device_transfer.hpp"
#include "core/region_transfer.hpp"
#include "core_fixture.hpp"
#include "shm_file.hpp"

namespace spgemmd::testing {
namespace {

template <typename T>
std::vector<T> as(const std::vector<char>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

TEST(region_transfer, a_matrix_goes_into_its_layout) {
  core_fixture f(1, 1 << 20, 1 << 20);
  const spgemm::matrix_info info = square(1000, 7000);
  const std::string handle = f.upload(info);
  core::pin p = f.pin(handle);
  core::csr_layout layout;
  bool fits = false;
  ASSERT_TRUE(core::layout_of(info, 4096, &layout, &fits).ok());
  EXPECT_FALSE(fits);
  ASSERT_TRUE(core::layout_of(info, 1 << 20, &layout, &fits).ok());
  ASSERT_TRUE(fits);

  shm_file file((1 << 20) + 4096);
  core::region_registry regions(4);
  const std::string s = regions.open_session(as_tenant(""));
  ASSERT_TRUE(regions.add(as_tenant(""), {"r", file.key(), s, 4096, 1 << 20, ""}).ok());
  core::region_span span;
  ASSERT_TRUE(regions.resolve(as_tenant(""), "r", 0, 1 << 20, 8, "result", &span).ok());
  core::row_blocks rows(*f.cache, *p, 4096);
  ASSERT_TRUE(core::write_rows(rows, span, layout).ok());

  const spgemm::any_csr filled = filled_matrix(info);
  const auto& want = std::get<spgemm::csr_matrix<double>>(filled);
  EXPECT_EQ(as<int64_t>(file.read(4096 + layout.row_offsets, 8 * 1001)), want.row_offsets);
  EXPECT_EQ(as<int32_t>(file.read(4096 + layout.col_indices, 4 * 7000)), want.col_indices);
  EXPECT_EQ(as<double>(file.read(4096 + layout.values, 8 * 7000)), want.values);
}

// Where the region can be pinned for the matrix's device, the device copies
// the whole matrix into it (fetch_into_pinned); pins stay within the budget,
// all regions together: past it, a region is written with pwrite as before,
// and the budget comes back when a pinned region goes.
TEST(region_transfer, a_matrix_goes_into_a_region_pinned_for_its_device_within_the_budget) {
  core_fixture f(1, 1 << 20, 1 << 20);
  f.fake().set_pins_host(true);
  const spgemm::matrix_info info = square(1000, 7000);
  const std::string handle = f.upload(info);
  core::pin p = f.pin(handle);
  core::csr_layout layout;
  bool fits = false;
  ASSERT_TRUE(core::layout_of(info, 1 << 20, &layout, &fits).ok());
  const int64_t region_end = 4096 + (1 << 20);
  core::region_registry regions(4, region_end);  // room to pin one region
  const std::string s = regions.open_session(as_tenant(""));
  shm_file one(region_end), two(region_end);
  ASSERT_TRUE(regions.add(as_tenant(""), {"one", one.key(), s, 4096, 1 << 20, ""}).ok());
  ASSERT_TRUE(regions.add(as_tenant(""), {"two", two.key(), s, 4096, 1 << 20, ""}).ok());

  const spgemm::any_csr filled = filled_matrix(info);
  const auto& want = std::get<spgemm::csr_matrix<double>>(filled);
  for (const auto& [name, file, pinned_fetches] :
       {std::tuple<const char*, const shm_file*, int64_t>{"one", &one, 1}, {"two", &two, 1}}) {
    SCOPED_TRACE(name);
    core::region_span span;
    ASSERT_TRUE(regions.resolve(as_tenant(""), name, 0, 1 << 20, 8, "result", &span).ok());
    core::row_blocks rows(*f.cache, *p, 4096);
    ASSERT_TRUE(core::write_rows(rows, span, layout).ok());
    EXPECT_EQ(f.fake().pinned_fetches(), pinned_fetches);
    EXPECT_EQ(f.fake().pinned(), static_cast<std::size_t>(region_end));
    EXPECT_EQ(as<int64_t>(file->read(4096 + layout.row_offsets, 8 * 1001)), want.row_offsets);
    EXPECT_EQ(as<int32_t>(file->read(4096 + layout.col_indices, 4 * 7000)), want.col_indices);
    EXPECT_EQ(as<double>(file->read(4096 + layout.values, 8 * 7000)), want.values);
  }
  ASSERT_TRUE(regions.remove(as_tenant(""), "one").ok());
  EXPECT_EQ(f.fake().pinned(), 0u);
  core::region_span span;
  ASSERT_TRUE(regions.resolve(as_tenant(""), "two", 0, 1 << 20, 8, "result", &span).ok());
  core::row_blocks rows(*f.cache, *p, 4096);
  ASSERT_TRUE(core::write_rows(rows, span, layout).ok());
  EXPECT_EQ(f.fake().pinned_fetches(), 2);  // pinned now that the budget came back
}

TEST(device_transfer, cuda_ipc_is_refused_without_a_gpu) {
  core_fixture f(1, 1 << 20, 1 << 20);
  EXPECT_FALSE(core::has_gpu(*f.cache));
  core::entry_info e;
  const core::outcome stored =
      core::store_from_device(*f.cache, *f.sched, as_tenant(""), square(10, 10), {}, "", 0, &e);
  EXPECT_EQ(stored.code, core::status::not_permitted);
  core::pin p = f.pin(f.upload(square(10, 10)));
  EXPECT_EQ(core::copy_to_device(*f.cache, *p, {}).code, core::status::not_permitted);
}

}  // namespace
}  // namespace spgemmd::testing
