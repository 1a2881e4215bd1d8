# The matrix ops between products on the GPU (apply, select, ewise, reduce, ...).
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/gpu_ops.cu)
