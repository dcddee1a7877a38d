# The Python package's tests (tests/python/) with the extension built here (python/), skipped
# with a message when the build has no nanobind (pip could not reach PyPI: tools/test.sh).
if(TILESIM_HAVE_PYTHON)
  add_test(NAME python_api COMMAND ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider
                                   ${PROJECT_SOURCE_DIR}/tests/python
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(python_api PROPERTIES
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;TILESIM_CLI=$<TARGET_FILE:tilesim>"
    TIMEOUT 600)
else()
  add_test(NAME python_api COMMAND ${CMAKE_COMMAND} -E echo
           "python_api skipped: no nanobind for this build's Python (tools/test.sh installs it from PyPI into build/venv; PyPI was not reachable or TILESIM_PYTHON is OFF)")
  set_tests_properties(python_api PROPERTIES SKIP_REGULAR_EXPRESSION "skipped")
endif()
