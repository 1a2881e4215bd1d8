# Algebraic multigrid: the setup and the solve (host code over a backend's
# amg::operations), the CPU passes, and with CUDA the GPU kernels.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/operations.cpp
  ${CMAKE_CURRENT_LIST_DIR}/builder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cycle.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spectral_radius.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chebyshev.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/strength.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/aggregate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/tentative.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/prolongator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/lu.cpp
)
if(SPGEMM_WITH_CUDA)
  target_sources(spgemm_engine PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/gpu/vectors.cu
    ${CMAKE_CURRENT_LIST_DIR}/gpu/lanczos.cu
    ${CMAKE_CURRENT_LIST_DIR}/gpu/scan.cu
    ${CMAKE_CURRENT_LIST_DIR}/gpu/setup.cu
    ${CMAKE_CURRENT_LIST_DIR}/gpu/dense.cu
  )
endif()
