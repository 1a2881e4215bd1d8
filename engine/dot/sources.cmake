# Masked dot products (C<M>, one dot product per entry of the mask).
target_sources(spgemm_engine PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dot.cu)
