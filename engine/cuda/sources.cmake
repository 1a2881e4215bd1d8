# The GPU runtime floor (engine/cuda/): checked calls, the device context and
# what launches read of it, memory resources, buffers, pinned staging and device CSR,
# read-back, streams side by side, value conversion, CSR checks on the device,
# the compaction of flagged entries, rows copied between devices. Knows no method.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cuda_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_guard.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_facts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pool_resource.cpp
  ${CMAKE_CURRENT_LIST_DIR}/limiting_resource.cpp
  ${CMAKE_CURRENT_LIST_DIR}/staging_buffers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_back.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stream_fan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/convert_values.cu
  ${CMAKE_CURRENT_LIST_DIR}/csr_check.cu
  ${CMAKE_CURRENT_LIST_DIR}/compact_entries.cu
  ${CMAKE_CURRENT_LIST_DIR}/copy_rows.cu
)
# Host sources include cuda_runtime_api.h; the static runtime is linked as the
# project asks (CMAKE_CUDA_RUNTIME_LIBRARY Static).
target_link_libraries(spgemm_engine PRIVATE CUDA::cudart_static)
