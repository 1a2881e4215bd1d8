# The dense method.
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dense.cu)
