# GPU backend sources (owned by the CUDA part of the engine): device context,
# pool, device CSR and the cuda backend (engine/cuda), RMerge (engine/rmerge), the
# hash method (engine/hash), ESC (engine/esc) and the block method (engine/block).
# Included from engine/CMakeLists.txt when SPGEMM_WITH_CUDA is ON.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cuda_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_facts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_guard.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pool_resource.cpp
  ${CMAKE_CURRENT_LIST_DIR}/limiting_resource.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_back.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stream_fan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_ops.cu
  ${CMAKE_CURRENT_LIST_DIR}/transpose.cu
  ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../rmerge/rmerge.cu
  ${CMAKE_CURRENT_LIST_DIR}/../rmerge/mul_limited_count.cu
  ${CMAKE_CURRENT_LIST_DIR}/../rmerge/mul_limited_f32.cu
  ${CMAKE_CURRENT_LIST_DIR}/../rmerge/mul_limited_f64.cu
  ${CMAKE_CURRENT_LIST_DIR}/../hash/hash.cu
  ${CMAKE_CURRENT_LIST_DIR}/../esc/esc.cu
  ${CMAKE_CURRENT_LIST_DIR}/../block/block.cu
)
# Host sources include cuda_runtime_api.h; the static runtime is linked as the
# project asks (CMAKE_CUDA_RUNTIME_LIBRARY Static).
target_link_libraries(spgemm_engine PRIVATE CUDA::cudart_static)
