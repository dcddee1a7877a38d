# ctest cmake_package_consumer: installs the sim component of BUILD_DIR into a prefix under it,
# configures and builds tests/consumer against that prefix only, and runs the consumer on a
# shipped scenario.
set(work ${BUILD_DIR}/package-test)
file(REMOVE_RECURSE ${work})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${work}/install --component sim)
foreach(f lib/cmake/tilesim/tilesimConfig.cmake lib/cmake/tilesim/tilesimConfigVersion.cmake
          include/tilesim/sim/verbs/simulate_verb.hpp lib/libtilesim_core.a)
  if(NOT EXISTS ${work}/install/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# A sanitizer build's archives call the sanitizer runtime: the consumer compiles and links with
# the same -fsanitize (tools/sanitize.sh asan), as any project using such a build would.
set(sanitize_flags "")
if(SANITIZE)
  set(sanitize_flags -DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}
                     -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${work}/build
    -DCMAKE_PREFIX_PATH=${work}/install -DCMAKE_BUILD_TYPE=Release ${sanitize_flags})
run(${CMAKE_COMMAND} --build ${work}/build)
run(${work}/build/consumer ${SOURCE_DIR}/scenarios/ring-256k.yaml)
