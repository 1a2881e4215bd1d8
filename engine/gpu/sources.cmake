# The GPU backend: stored matrices, uploads, CUDA IPC, pinned host memory, the table of methods.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_amg.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_stored_matrix.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ipc_transfer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/method_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pinned_transfer.cpp
)
