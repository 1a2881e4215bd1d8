# The segmerge method (bhsparse's framework through the table, its long rows by segmented merge).
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/segmerge.cu)
