# The GPU transpose.
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/transpose.cu)
