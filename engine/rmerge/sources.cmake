# RMerge: host dispatch, and the MulLimited kernels in one translation unit per
# pass and value type, so that their instantiations compile in parallel.
target_sources(spgemm_engine PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/rmerge.cu
  ${CMAKE_CURRENT_LIST_DIR}/mul_limited_count.cu
  ${CMAKE_CURRENT_LIST_DIR}/mul_limited_f32.cu
  ${CMAKE_CURRENT_LIST_DIR}/mul_limited_f64.cu
)
