# Passes when configure found the cuDNN frontend headers (cudnn_frontend.h in FRONTEND) and
# turned the cuDNN kernels on; otherwise says how to get them.
#   cmake -DHAVE_CUDNN=ON|OFF -DFRONTEND=<include dir> -P expect_cudnn.cmake
if(NOT HAVE_CUDNN)
  message(FATAL_ERROR "cuDNN kernels are OFF in this CUDA build (frontend headers: '${FRONTEND}'); "
                      "run tools/install-deps.sh and configure again")
endif()
if(NOT EXISTS "${FRONTEND}/cudnn_frontend.h")
  message(FATAL_ERROR "configure reported the frontend in '${FRONTEND}' but cudnn_frontend.h is not there")
endif()
file(STRINGS "${FRONTEND}/cudnn_frontend_version.h" major REGEX "define CUDNN_FRONTEND_MAJOR_VERSION")
message(STATUS "ok: cuDNN frontend in ${FRONTEND} (${major})")
