# The planner's device passes (row shape, block structure, product statistics);
# its rules are header-only.
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/statistics.cu)
