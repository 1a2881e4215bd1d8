# The planner's device passes (row shape, block structure, product statistics,
# the work per row that row panels are cut by, the rows that repeat the row
# before); its rules are header-only.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/statistics.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_work.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_repeats.cu
)
