# Attention block kernels: CPU tests always, GPU tests where the CUDA kernels are built (they
# skip with a message when no device is present).
tilesim_test(test_kernels
  SOURCES test_kernels_reference.cpp test_kernels_cpu.cpp test_kernels_merge.cpp
          test_kernels_diagonal_band.cpp
  LIBS tilesim_kernels_cpu)
if(TILESIM_HAVE_CUDA)
  tilesim_test(test_kernels_cuda SOURCES test_kernels_cuda.cpp LIBS tilesim_kernels_cuda)
endif()
if(TILESIM_HAVE_CUDA AND TILESIM_CUDNN)
  # The install script brings the cuDNN frontend headers; a CUDA build without them has lost
  # the kernels users run (tests/kernels/expect_cudnn.cmake reads the configure result; a
  # build configured with -DTILESIM_CUDNN=OFF asked for that and has no such test).
  add_test(NAME "kernels: cuDNN frontend headers found at configure"
           COMMAND ${CMAKE_COMMAND} -DHAVE_CUDNN=${TILESIM_HAVE_CUDNN}
                   "-DFRONTEND=${TILESIM_CUDNN_FRONTEND_INCLUDE}"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/kernels/expect_cudnn.cmake)
endif()
