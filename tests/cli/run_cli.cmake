# Runs a CLI command and checks its exit code and output.
#   cmake -DCOMMAND="a;b;c" -DEXPECT_EXIT=2 -DEXPECT_REGEX="..." -P run_cli.cmake
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
set(all "${out}${err}")
if(NOT rc EQUAL EXPECT_EXIT)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_EXIT}; output:\n${all}")
endif()
if(DEFINED EXPECT_REGEX AND NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}':\n${all}")
endif()
message(STATUS "ok: exit ${rc}")
