# The installed CMake package works for another project (tests/consumer/).
add_test(NAME cmake_package_consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 "-DSANITIZE=${TILESIM_SANITIZE}"
                 -P ${PROJECT_SOURCE_DIR}/tests/consumer/run_consumer.cmake)
set_tests_properties(cmake_package_consumer PROPERTIES TIMEOUT 600)
