# Runs `simulate` of ring on 65536 GPUs, every rank simulated (--no-symmetry) and every op recorded
# (--per-op, so the whole plan), and checks: exit 2, the estimate in the message, and a wall time
# under LIMIT_S seconds.
string(TIMESTAMP t0 "%s%f")
execute_process(COMMAND ${TILESIM} simulate scenarios/ring-256k.yaml --set schedule.gpus=65536 --no-symmetry
                        --per-op --max-memory 12GB
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(TIMESTAMP t1 "%s%f")
math(EXPR elapsed_us "${t1} - ${t0}")
message(STATUS "exit ${rc} after ${elapsed_us} us:\n${out}${err}")
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "exit ${rc}, expected 2")
endif()
if(NOT "${err}" MATCHES "ring on 65536 GPUs is about 2\\.58e\\+10 ops, 2\\.70 TiB of memory.*at most 4160 GPUs would fit")
  message(FATAL_ERROR "no estimate in the message")
endif()
math(EXPR limit_us "${LIMIT_S} * 1000000")
if(elapsed_us GREATER limit_us)
  message(FATAL_ERROR "took ${elapsed_us} us, more than ${LIMIT_S} s")
endif()
