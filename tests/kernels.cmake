# Attention block kernels: CPU tests always, GPU tests where the CUDA kernels are built (they
# skip with a message when no device is present).
tilesim_test(test_kernels
  SOURCES test_kernels_reference.cpp test_kernels_cpu.cpp test_kernels_merge.cpp
          test_kernels_diagonal_band.cpp
  LIBS tilesim_kernels_cpu)
if(TILESIM_HAVE_CUDA)
  tilesim_test(test_kernels_cuda SOURCES test_kernels_cuda.cpp LIBS tilesim_kernels_cuda)
endif()
