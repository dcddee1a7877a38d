# Finds the cuDNN frontend (header-only C++ graph API) and the cuDNN library it drives.
# Sets TILESIM_HAVE_CUDNN and, when ON, the imported target tilesim::cudnn_frontend.
# Search order: -DTILESIM_CUDNN_FRONTEND_DIR=<dir with include/ or the include dir itself>,
# the project-local .deps/cudnn-frontend (tools/install-deps.sh), then the include/ folder pip
# installs the nvidia-cudnn-frontend wheel into (site-packages/include).
set(TILESIM_HAVE_CUDNN OFF)
set(TILESIM_CUDNN_FRONTEND_DIR "" CACHE PATH "cuDNN frontend headers (a dir holding include/)")
option(TILESIM_CUDNN "Use cuDNN fused attention where the frontend headers and cuDNN are found" ON)
if(TILESIM_HAVE_CUDA AND TILESIM_CUDNN)
  set(frontend_hints "")
  if(TILESIM_CUDNN_FRONTEND_DIR)
    list(APPEND frontend_hints ${TILESIM_CUDNN_FRONTEND_DIR}/include ${TILESIM_CUDNN_FRONTEND_DIR})
  endif()
  list(APPEND frontend_hints ${PROJECT_SOURCE_DIR}/.deps/cudnn-frontend/include)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"
      OUTPUT_VARIABLE pip_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(pip_site)
      list(APPEND frontend_hints ${pip_site}/include)
    endif()
  endif()
  find_path(TILESIM_CUDNN_FRONTEND_INCLUDE cudnn_frontend.h HINTS ${frontend_hints} NO_DEFAULT_PATH)
  find_path(TILESIM_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(TILESIM_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NOT TARGET CUDA::nvrtc)
    set(TILESIM_CUDNN_LIBRARY TILESIM_CUDNN_LIBRARY-NOTFOUND)  # the frontend needs nvrtc
  endif()
  if(TILESIM_CUDNN_FRONTEND_INCLUDE AND TILESIM_CUDNN_INCLUDE AND TILESIM_CUDNN_LIBRARY)
    file(STRINGS ${TILESIM_CUDNN_FRONTEND_INCLUDE}/cudnn_frontend_version.h frontend_version_lines
         REGEX "define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION")
    string(REGEX REPLACE "[^0-9;]" "" frontend_version "${frontend_version_lines}")
    list(JOIN frontend_version "." frontend_version)
    set(TILESIM_HAVE_CUDNN ON)
    add_library(tilesim_cudnn_frontend INTERFACE)
    add_library(tilesim::cudnn_frontend ALIAS tilesim_cudnn_frontend)
    # SYSTEM: the frontend's headers are not held to the project's -Werror warning set.
    target_include_directories(tilesim_cudnn_frontend SYSTEM INTERFACE
                               ${TILESIM_CUDNN_FRONTEND_INCLUDE} ${TILESIM_CUDNN_INCLUDE})
    # nvrtc: the frontend compiles some of its own engines at run time.
    target_link_libraries(tilesim_cudnn_frontend INTERFACE ${TILESIM_CUDNN_LIBRARY} CUDA::cudart
                                                           CUDA::nvrtc)
    message(STATUS "tilesim: cuDNN frontend ${frontend_version} found in "
                   "${TILESIM_CUDNN_FRONTEND_INCLUDE}; cuDNN ${TILESIM_CUDNN_LIBRARY}")
  else()
    message(STATUS "tilesim: cuDNN kernels OFF: frontend headers "
                   "${TILESIM_CUDNN_FRONTEND_INCLUDE}, cudnn.h ${TILESIM_CUDNN_INCLUDE}, libcudnn "
                   "${TILESIM_CUDNN_LIBRARY} (run tools/install-deps.sh for the headers); the "
                   "CUDA backend uses its own kernels")
  endif()
endif()
