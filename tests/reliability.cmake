# Reliability: atomic outputs, interrupts, the plan-size guard and the plan's structural check
# (unit tests), and end-to-end CLI checks of the guard and of interrupted writers.
tilesim_test(test_reliability
  SOURCES test_atomic_file.cpp test_resource_guard.cpp test_plan_structure.cpp
  LIBS tilesim_scenario tilesim_schedules tilesim_core)

# The guard answers before anything is built: ring on 65536 GPUs with symmetry off and every op
# recorded (--per-op: the whole plan, whose guard run_simulation applies before the topology is
# loaded), exit 2 with the estimate, in under 2 s of wall time
# (measured by the script; without the guard it grows until killed). Without --per-op the run is
# lazy (sim/scenario/lazy_plan.hpp): a window of ops per rank, which the guard accepts.
add_test(NAME "cli guard: ring on 65536 GPUs is refused within 2 s"
  COMMAND ${CMAKE_COMMAND} -DTILESIM=$<TARGET_FILE:tilesim> -DLIMIT_S=2
          -P ${CMAKE_CURRENT_SOURCE_DIR}/reliability/guard_refuses_fast.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
tilesim_cli_test(guard_max_ops 2
  "key 'schedule\\.gpus': a plan this machine can hold: ring on 64 GPUs is about 2\\.43e\\+04 ops.*--max-ops 1e\\+04; at most 41 GPUs would fit"
  simulate scenarios/ring-256k.yaml --set schedule.gpus=64 --max-ops 1e4 --no-symmetry)
# A symmetric ring passes the guard by its quotient (8 of 64 ranks: 3032 ops); a request that
# needs every rank's ops (--per-op) puts the full plan (24256 ops) through the guard too.
tilesim_cli_test(guard_per_op_full_plan 2
  "key 'schedule\\.gpus': a plan this machine can hold: ring on 64 GPUs is about 2\\.43e\\+04 ops"
  simulate scenarios/ring-256k.yaml --set schedule.gpus=64 --max-ops 1e4 --per-op)
# The summary shows the full plan's ops and the quotient's simulated ones (a presentation
# check; the counts are those test_symmetry checks against the full generator).
tilesim_cli_test(symmetric_summary_ops 0
  "simulation +24256 ops, .*\\(symmetric: 3032 ops simulated, one rank of each of 8 classes of 8 ranks\\)"
  simulate scenarios/ring-256k.yaml --set schedule.gpus=64 --max-ops 1e4)
# pass-Q on 4096 GPUs: its offset quotient runs windowed (pass_q_source.hpp) with 8P objects,
# and the symmetry search walks every rank's peers by destination, keeping 8 bytes for each of
# the 4096 x 4095 pairs (kSearchBytesPerStreamedPair) and the windowed run's per-GPU state:
# 340.10 MiB whatever the classes, refused at 300 MB before the search starts.
tilesim_cli_test(guard_all_peers_search 2
  "key 'schedule\\.gpus': a plan this machine can hold: pass_q on 4096 GPUs simulated symmetrically with any number of rank classes \\(its symmetry search looks at every rank's peers, beside the run's per-GPU state\\) is about 5\\.32e\\+04 ops, 340\\.10 MiB of memory"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.kind=pass_q
           --set schedule.gpus=4096 --max-memory 300MB)
# With 1.5 GB the search would fit, but the ring successors' shift search (4096 routes) bounds
# the classes from below by 1024, whose windowed quotient (1024 windows of ops, 1024 x 4095
# routes in use, the search's 8 bytes a pair) is estimated at 1.53 GiB (the run, when let
# through, peaks at 1.21 GiB): refused before the search walks the 16.8M rank pairs.
tilesim_cli_test(guard_all_peers_classes_bound 2
  "key 'schedule\\.gpus': a plan this machine can hold: pass_q on 4096 GPUs simulated as at least 1024 rank classes is about 5\\.45e\\+07 ops, 1\\.53 GiB of memory"
  simulate scenarios/ring-256k.yaml --set attention.seq_len=1M --set schedule.kind=pass_q
           --set schedule.gpus=4096 --max-memory 1.5GB)
tilesim_cli_test(guard_bad_max_memory 2 "--max-memory.*a positive byte size"
  simulate scenarios/ring-256k.yaml --max-memory lots)

# SIGINT part way through `simulate --out --trace` and `regress --update`: exit 130, the
# message, every previous file byte-identical and no temporary left.
add_test(NAME "cli interrupt: simulate --out --trace and regress --update keep every file"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/reliability/interrupt_keeps_files.sh
          $<TARGET_FILE:tilesim> ${PROJECT_SOURCE_DIR})
set_tests_properties("cli interrupt: simulate --out --trace and regress --update keep every file"
  PROPERTIES TIMEOUT 120)

# Runtime faults under mpirun (ring, 4 ranks, the small shape of tests/runtime.cmake): each
# ends the whole job non-zero, names rank and op, leaves no rank running, and prints its time
# to a clean exit (tests/reliability/fault_run.sh). Limits: --timeout 1.5s plus mpirun's
# start and tear-down, with room for a loaded 2-core host.
if(TILESIM_HAVE_MPI)
  set(fault_small --set schedule.gpus=4 --set attention.seq_len=96 --set attention.heads=4
                  --set attention.kv_heads=2 --set attention.head_dim=16 --set attention.dtype=fp32
                  --timeout 1.5s)
  # name | mode | rank | op | regex
  set(fault_cases
    "a rank killed mid-run (SIGKILL)|kill|1|5|rank 1 kills itself \\(SIGKILL\\) at rank 1 op 5: compute.*process rank 1 .*exited on signal 9"
    "a rank that never posts a receive|no_recv|1|4|rank 1 never posts the receive rank 1 op 4: recv KV\\[3\\] from rank 0.*failed at rank [0-9] op [0-9]+: .*no progress for 1500 ms"
    "an MPI peer that exits early|exit|2|5|rank 2 exits early at rank 2 op 5: compute"
    "a NaN in an input|nan|3|0|rank 3 failed at rank 3 op [0-9]+: compute.*: input [A-Z]+\\[3\\] holds a non-finite value \\(nan\\)")
  foreach(case ${fault_cases})
    string(REPLACE "|" ";" f "${case}")
    list(GET f 0 name)
    list(GET f 1 mode)
    list(GET f 2 rank)
    list(GET f 3 op)
    list(GET f 4 regex)
    add_test(NAME "runtime fault: ${name} ends the job"
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/reliability/fault_run.sh ${MPIEXEC_EXECUTABLE}
              $<TARGET_FILE:tilesim> ${PROJECT_SOURCE_DIR}/scenarios/ring-256k.yaml 4 ${mode}
              ${rank} ${op} 30 "${regex}" ${fault_small})
    set_tests_properties("runtime fault: ${name} ends the job" PROPERTIES TIMEOUT 120
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
endif()
