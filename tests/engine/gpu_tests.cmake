# GPU tests: the cuda backend and its methods against the CPU reference. Included
# from tests/engine/CMakeLists.txt when SPGEMM_WITH_CUDA is ON. Every test
# skips (GTEST_SKIP) where no CUDA device is visible.
add_executable(spgemm_gpu_tests
  ${CMAKE_CURRENT_LIST_DIR}/gpu_rmerge_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_methods_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_block_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_statistics_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_concurrent_jobs_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_semiring_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_matrix_ops_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_amg_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_row_panels_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_idle_memory_test.cpp
)
target_link_libraries(spgemm_gpu_tests PRIVATE spgemm::engine GTest::gtest_main)
# gpu_block_test.cpp includes the engine's host-only block rule (engine/planner/block_structure.hpp).
target_include_directories(spgemm_gpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/engine)
target_compile_definitions(spgemm_gpu_tests PRIVATE SPGEMM_DEFAULT_MATRICES="${SPGEMM_DEFAULT_MATRICES}")
spgemm_warnings(spgemm_gpu_tests)
gtest_discover_tests(spgemm_gpu_tests DISCOVERY_MODE PRE_TEST)
