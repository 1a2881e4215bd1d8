# The bhSPARSE method (and, with its segmented merge, the segmerge method's).
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bhsparse.cu)
