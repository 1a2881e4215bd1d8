# ESC (expand-sort-compress).
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/esc.cu)
