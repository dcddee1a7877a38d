# Runtime: unit tests (no MPI needed) and, where MPI is found, end-to-end runs of
# `tilesim run --backend cpu` under mpirun checked against the reference attention.
tilesim_test(test_runtime
  SOURCES test_runtime_inputs.cpp test_runtime_order.cpp test_runtime_results.cpp
          test_runtime_backward.cpp
  LIBS tilesim_executor tilesim_schedules)

if(NOT TILESIM_HAVE_MPI)
  message(STATUS "tilesim: MPI not found, runtime mpirun tests skipped")
  return()
endif()

# Small shapes keep every run well under a second on two cores.
set(rt_scenario ${PROJECT_SOURCE_DIR}/scenarios/ring-256k.yaml)
set(rt_small --set attention.seq_len=96 --set attention.heads=4 --set attention.kv_heads=2
             --set attention.head_dim=16 --set attention.dtype=fp32)
set(rt_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)

# tilesim_mpi_test(NAME ranks EXPECT ok|fail [REGEX r] [ENV e...] ARGS ... [ARGS2 ...] [SAME ON|OFF]
#                  [REPEATS])
# REPEATS labels a run `repeats_covered_path`: another run here takes its executor path with
# the same schedule: the causal=true variant (the same plan structure under a mask; the
# unmasked block kernel keeps the ring 4 and mesh 2x2 non-causal runs, and test_kernels), the
# `both` pass (which runs this backward after the forward), the same schedule on fewer ranks.
# The Release suite runs every one; the asan stage leaves these out (tools/sanitize.sh).
function(tilesim_mpi_test name ranks)
  cmake_parse_arguments(T "REPEATS" "EXPECT;REGEX;SAME" "ARGS;ARGS2;ENV" ${ARGN})
  set(launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} --oversubscribe
             $<TARGET_FILE:tilesim> run ${rt_scenario} --backend cpu ${rt_small})
  set(cmd ${launch} ${T_ARGS})
  list(JOIN cmd "|" cmd)
  set(defs -DCMD=${cmd} -DEXPECT=${T_EXPECT})
  if(T_REGEX)
    list(APPEND defs "-DREGEX=${T_REGEX}")
  endif()
  if(T_ARGS2)
    set(cmd2 ${launch} ${T_ARGS2})
    list(JOIN cmd2 "|" cmd2)
    list(APPEND defs -DCMD2=${cmd2} -DSAME=${T_SAME})
  endif()
  add_test(NAME "runtime: ${name}"
           COMMAND ${CMAKE_COMMAND} ${defs} -P ${CMAKE_CURRENT_SOURCE_DIR}/runtime/expect_run.cmake)
  set_tests_properties("runtime: ${name}" PROPERTIES TIMEOUT 60 ENVIRONMENT "${rt_env};${T_ENV}")
  if(T_REPEATS)
    set_tests_properties("runtime: ${name}" PROPERTIES LABELS repeats_covered_path)
  endif()
endfunction()

# rt_repeats(<var> causal [pass]): <var> is REPEATS for a run of a case that also runs with
# causal=true, or with pass=both where this one runs the backward alone.
function(rt_repeats var causal)
  set(pass "${ARGV2}")
  set(flag "")
  if(causal STREQUAL "false" OR pass STREQUAL "backward")
    set(flag REPEATS)
  endif()
  set(${var} ${flag} PARENT_SCOPE)
endfunction()

foreach(gpus 4 6)
  foreach(causal false true)
    # ring 4 causal=false stays in every stage: the one non-causal ring.
    set(repeats "")
    if(gpus EQUAL 6 AND causal STREQUAL "false")
      set(repeats REPEATS)
    endif()
    tilesim_mpi_test("ring ${gpus} ranks causal=${causal} matches full attention" ${gpus}
      EXPECT ok REGEX "check +max abs error [^\n]*: passed" ${repeats}
      ARGS --set schedule.gpus=${gpus} --set attention.causal=${causal} --check)
  endforeach()
endforeach()
# 192 tokens, 4 heads of 32, GQA 4:1, another seed.
tilesim_mpi_test("ring 4 ranks GQA head_dim 32 matches full attention" 4
  EXPECT ok REGEX "passed"
  ARGS --set schedule.gpus=4 --set attention.seq_len=192 --set attention.head_dim=32
       --set attention.kv_heads=1 --set attention.causal=true --seed 7 --check)
tilesim_mpi_test("same seed gives identical outputs" 4 EXPECT ok SAME ON
  ARGS --set schedule.gpus=4 --set attention.causal=true --seed 11
  ARGS2 --set schedule.gpus=4 --set attention.causal=true --seed 11)
tilesim_mpi_test("another seed gives other outputs" 4 EXPECT ok SAME OFF
  ARGS --set schedule.gpus=4 --seed 11
  ARGS2 --set schedule.gpus=4 --seed 12)
tilesim_mpi_test("a failing rank ends the job naming rank and op" 4 EXPECT fail
  REGEX "tilesim run: rank 2 failed at rank 2 op 3: [^\n]*injected failure"
  ENV TILESIM_FAIL_RANK=2 TILESIM_FAIL_OP=3
  ARGS --set schedule.gpus=4 --check)
tilesim_mpi_test("a hanging rank trips the others' watchdog" 4 EXPECT fail
  REGEX "failed at rank [0-9] op [0-9]+: [^\n]*no progress for 1500 ms"
  ENV TILESIM_FAIL_RANK=1 TILESIM_FAIL_OP=2 TILESIM_FAIL_MODE=hang
  ARGS --set schedule.gpus=4 --timeout 1.5s)
tilesim_mpi_test("rank count must equal schedule.gpus" 2 EXPECT fail
  REGEX "schedule.gpus is 4 but this job has 2 MPI rank"
  ARGS --set schedule.gpus=4)
tilesim_mpi_test("one rank without peers" 1 EXPECT ok REGEX "passed"
  ARGS --set schedule.gpus=1 --set attention.causal=true --check)
# Every mesh tile of 4 and 6 ranks (merges of O/LSE partials at the Q owners).
foreach(tile 2,2 1,4 4,1 2,3 3,2 1,6 6,1)
  string(REPLACE "," ";" ab "${tile}")
  list(GET ab 0 a)
  list(GET ab 1 b)
  math(EXPR gpus "${a} * ${b}")
  foreach(causal false true)
    set(repeats "")
    if(NOT tile STREQUAL "2,2")  # 2x2 keeps its non-causal run
      rt_repeats(repeats ${causal})
    endif()
    tilesim_mpi_test("mesh ${a}x${b} causal=${causal} matches full attention" ${gpus}
      EXPECT ok REGEX "check +max abs error [^\n]*: passed" ${repeats}
      ARGS --set schedule.gpus=${gpus} --set schedule.kind=mesh "--set" "schedule.tile=[${a},${b}]"
           --set attention.causal=${causal} --check)
  endforeach()
endforeach()
# A plan whose ranks are not in GPU order: on nodes of two GPUs the mesh numbers a 4 x 2
# node-major tile column by column (rank tc b + tr on GPU tr a + tc: mesh_placement.hpp), so
# plan rank r must run on the process of MPI rank (GPU) placement[r] = 0 4 1 5 2 6 3 7, which
# the run reports as it saw it (each process's MPI_COMM_WORLD rank); --check makes a wrong
# numerics exit 1.
tilesim_mpi_test("mesh 4x2 numbered by column runs rank r on GPU placement[r]" 8
  EXPECT ok
  REGEX "mpi_rank_of_plan_rank[^0-9]*0[^0-9]+4[^0-9]+1[^0-9]+5[^0-9]+2[^0-9]+6[^0-9]+3[^0-9]+7[^0-9]"
  ARGS --set schedule.gpus=8 --set schedule.kind=mesh "--set" "schedule.tile=[4,2]"
       --set topology=../tests/data/runtime/two-gpu-nodes.yaml
       --set calibration=../topologies/h100.calib.yaml --check --json)
# Every schedule kind forward, fp32, checked against the full attention (max abs error 1e-5).
# A case is name|ranks|settings ("," separated)|values: the values checked, i.e. every output
# element exactly once (O and LSE: S*H*d + S*H = 6528 for the small shape; dQ and dKV:
# S*H*d + 2*S*Hkv*d = 12288). Ulysses with 4 ranks and kv_heads % 4 == 0 runs 8 heads
# over 4 kv heads (GQA 2:1); "usp uAxB" has A ranks of all-to-all in each of B ring groups.
set(rt_forward_cases
  "zigzag|4|schedule.kind=zigzag|6528"
  "striped|4|schedule.kind=striped|6528"
  "pass_q|4|schedule.kind=pass_q|6528"
  "allgather_kv|4|schedule.kind=allgather_kv|6528"
  "ulysses|4|schedule.kind=ulysses,attention.heads=8,attention.kv_heads=4|13056"
  "usp u2x2|4|schedule.kind=usp,schedule.ulysses=2|6528"
  "usp u2x4|8|schedule.kind=usp,schedule.ulysses=2|6528"
  "usp u4x2|8|schedule.kind=usp,schedule.ulysses=4,attention.heads=8,attention.kv_heads=4|13056"
  "double_ring inner 2|4|schedule.kind=double_ring,schedule.inner=2|6528"
  "double_ring inner 2|8|schedule.kind=double_ring,schedule.inner=2|6528"
  "double_ring inner 4|8|schedule.kind=double_ring,schedule.inner=4|6528")
# Backward and both passes: dQ, dK, dV checked at their owners (max abs error 1e-4);
# name|ranks|settings|forward values|backward values.
set(rt_backward_cases
  "ring|4|schedule.kind=ring|6528|12288"
  "zigzag|4|schedule.kind=zigzag|6528|12288"
  "striped|4|schedule.kind=striped|6528|12288"
  "ulysses|4|schedule.kind=ulysses,attention.heads=8,attention.kv_heads=4|13056|24576"
  "usp u2x2|4|schedule.kind=usp,schedule.ulysses=2|6528|12288"
  "allgather_kv|4|schedule.kind=allgather_kv|6528|12288"
  "double_ring inner 2|4|schedule.kind=double_ring,schedule.inner=2|6528|12288"
  "double_ring inner 2|8|schedule.kind=double_ring,schedule.inner=2|6528|12288"
  "double_ring inner 4|8|schedule.kind=double_ring,schedule.inner=4|6528|12288"
  "double_ring inner 1|4|schedule.kind=double_ring,schedule.inner=1|6528|12288"
  # KV replication: the small shape's 2 KV heads on u = 4 (each KV head on 2 ranks).
  "ulysses kv replicated|4|schedule.kind=ulysses|6528|12288"
  "usp u4x2 kv replicated|8|schedule.kind=usp,schedule.ulysses=4|6528|12288")

# rt_case(<case> prefix): prefix_name, prefix_gpus, prefix_sets ("--set;a=b;..."), prefix_v1,
# prefix_v2 from a case string.
function(rt_case case prefix)
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 gpus)
  list(GET fields 2 settings)
  list(GET fields 3 v1)
  list(LENGTH fields n)
  set(v2 "")
  if(n GREATER 4)
    list(GET fields 4 v2)
  endif()
  string(REPLACE "," ";" settings "${settings}")
  set(sets "")
  foreach(s ${settings})
    list(APPEND sets --set ${s})
  endforeach()
  set(${prefix}_name "${name}" PARENT_SCOPE)
  set(${prefix}_gpus "${gpus}" PARENT_SCOPE)
  set(${prefix}_sets "${sets}" PARENT_SCOPE)
  set(${prefix}_v1 "${v1}" PARENT_SCOPE)
  set(${prefix}_v2 "${v2}" PARENT_SCOPE)
endfunction()

set(rt_fwd "check +max abs error [^\n]* over")
set(rt_bwd "check backward +max abs error [^\n]* over")
set(rt_ok "values \\(tolerance [^\n]*\\): passed")
foreach(case ${rt_forward_cases})
  rt_case("${case}" c)
  foreach(causal false true)
    rt_repeats(repeats ${causal})
    tilesim_mpi_test("${c_name} ${c_gpus} ranks causal=${causal} matches full attention" ${c_gpus}
      EXPECT ok REGEX "${rt_fwd} ${c_v1} ${rt_ok}" ${repeats}
      ARGS --set schedule.gpus=${c_gpus} ${c_sets} --set attention.causal=${causal} --check)
  endforeach()
endforeach()

foreach(case ${rt_backward_cases})
  rt_case("${case}" c)
  foreach(pass backward both)
    set(regex "${rt_bwd} ${c_v2} ${rt_ok}")
    if(pass STREQUAL "both")
      set(regex "${rt_fwd} ${c_v1} ${rt_ok}\n  ${regex}")
    endif()
    foreach(causal false true)
      rt_repeats(repeats ${causal} ${pass})
      tilesim_mpi_test("${c_name} ${c_gpus} ranks ${pass} causal=${causal} matches full gradients"
        ${c_gpus} EXPECT ok REGEX "${regex}" ${repeats}
        ARGS --set schedule.gpus=${c_gpus} ${c_sets} --set attention.pass=${pass}
             --set attention.causal=${causal} --check)
    endforeach()
  endforeach()
endforeach()

# GQA 4:1 backward on the ring (dKV: 2*96*1*16 values) and GQA 4:1 per head group on usp
# (8 heads over 2 kv heads), both passes, another seed.
tilesim_mpi_test("ring 4 ranks GQA backward matches full gradients" 4
  EXPECT ok REGEX "${rt_bwd} 9216 ${rt_ok}"
  ARGS --set schedule.gpus=4 --set attention.kv_heads=1 --set attention.pass=backward
       --set attention.causal=true --seed 5 --check)
tilesim_mpi_test("usp u2x2 GQA both passes match full attention and gradients" 4
  EXPECT ok REGEX "${rt_fwd} 13056 ${rt_ok}\n  ${rt_bwd} 18432 ${rt_ok}"
  ARGS --set schedule.gpus=4 --set schedule.kind=usp --set schedule.ulysses=2
       --set attention.heads=8 --set attention.kv_heads=2 --set attention.pass=both
       --set attention.causal=true --seed 5 --check)
# Two CPU kernel threads per rank next to the compute worker and the watchdog (the threaded
# path that tools/sanitize.sh tsan runs): forward tasks are heads (4) and backward tasks kv heads
# (2), so both passes split over both threads; checked against the reference like the one-thread runs.
tilesim_mpi_test("ring 4 ranks both causal=true with 2 kernel threads matches full gradients" 4
  EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
  ARGS --set schedule.gpus=4 --set attention.pass=both --set attention.causal=true --threads 2
       --check)
# Mesh 2x2 backward and both: partial dQ reduced in Q-groups and partial dKV in KV-groups
# (sum merges), checked at the owners (max abs error 1e-4); the tile has a comma, so these
# are spelled out rather than listed in rt_backward_cases.
foreach(pass backward both)
  set(regex "${rt_bwd} 12288 ${rt_ok}")
  if(pass STREQUAL "both")
    set(regex "${rt_fwd} 6528 ${rt_ok}\n  ${regex}")
  endif()
  foreach(causal false true)
    rt_repeats(repeats ${causal} ${pass})
    tilesim_mpi_test("mesh 2x2 4 ranks ${pass} causal=${causal} matches full gradients" 4
      EXPECT ok REGEX "${regex}" ${repeats}
      ARGS --set schedule.gpus=4 --set schedule.kind=mesh "--set" "schedule.tile=[2,2]"
           --set attention.pass=${pass} --set attention.causal=${causal} --check)
  endforeach()
endforeach()
# GQA 2:1 (kv_heads 2 of 4 heads, the small shape) on a 2x3 tile, both passes, another seed.
tilesim_mpi_test("mesh 2x3 6 ranks both causal=true matches full gradients" 6
  EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
  ARGS --set schedule.gpus=6 --set schedule.kind=mesh "--set" "schedule.tile=[2,3]"
       --set attention.pass=both --set attention.causal=true --seed 5 --check)
# The degenerate tiles: 1x4 (dKV reduced on the KV ring only) and 4x1 (dQ on the Q ring only).
foreach(tile 1,4 4,1)
  string(REPLACE "," ";" ab "${tile}")
  list(GET ab 0 a)
  list(GET ab 1 b)
  tilesim_mpi_test("mesh ${a}x${b} 4 ranks backward causal=true matches full gradients" 4
    EXPECT ok REGEX "${rt_bwd} 12288 ${rt_ok}"
    ARGS --set schedule.gpus=4 --set schedule.kind=mesh "--set" "schedule.tile=[${a},${b}]"
         --set attention.pass=backward --set attention.causal=true --check)
endforeach()

# Every mask under mpirun, checked against the reference attention with the same mask (max abs
# error 1e-5 forward, 1e-4 backward, as above): a sliding window of 20 tokens (the ring then
# runs 2 of its 4 steps and sends each dKV straight home) and of 40 (3 steps), and packed
# documents 10 + 30 + 20 + 36 = 96 tokens, causal inside each, both passes. Mesh 2x2 leaves
# chunk pairs empty under all three (zigzag blocks of 12 tokens), so it sends only the chunks
# and partials with work (docs/schedules.md "Masks").
set(rt_mask_window20 --set attention.causal=true --set attention.mask=sliding_window
                     --set attention.window=20)
set(rt_mask_window40 --set attention.causal=true --set attention.mask=sliding_window
                     --set attention.window=40)
set(rt_mask_documents --set attention.causal=true --set attention.mask=documents
                      "--set" "attention.documents=[10,30,20,36]")
set(rt_mask_sched_ring --set schedule.kind=ring)
set(rt_mask_sched_zigzag --set schedule.kind=zigzag)
set(rt_mask_sched_usp --set schedule.kind=usp --set schedule.ulysses=2)
set(rt_mask_sched_allgather_kv --set schedule.kind=allgather_kv)
set(rt_mask_sched_mesh --set schedule.kind=mesh "--set" "schedule.tile=[2,2]")
foreach(mask window20 window40 documents)
  foreach(sched ring zigzag usp allgather_kv mesh)
    if(mask STREQUAL "window40" AND NOT sched MATCHES "^(ring|zigzag|mesh)$")
      continue()
    endif()
    set(pass both)
    set(regex "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}")
    tilesim_mpi_test("${sched} 4 ranks ${pass} mask ${mask} matches the masked reference" 4
      EXPECT ok REGEX "${regex}"
      ARGS --set schedule.gpus=4 ${rt_mask_sched_${sched}} ${rt_mask_${mask}}
           --set attention.pass=${pass} --check)
  endforeach()
endforeach()
# Pass-Q (forward only) under masks: contiguous chunks of 24 tokens, each Q chunk sent towards
# r-1 only as far as its farthest reader (pass_q_schedule.hpp): W = 20 one hop, W = 40 two, the
# documents as far as each document reaches.
foreach(mask window20 window40 documents)
  tilesim_mpi_test("pass_q 4 ranks forward mask ${mask} matches the masked reference" 4
    EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}"
    ARGS --set schedule.gpus=4 --set schedule.kind=pass_q ${rt_mask_${mask}}
         --set attention.pass=forward --check)
endforeach()
# Zigzag under windows runs its ring both ways on its 8 blocks of 12 tokens (zigzag_schedule.hpp):
# W = 10 (each block read only by the next: one hop per block, ranks 0 and 3 receive one
# half chunk) and W = 20 (two blocks back: rank 3's low block goes back to rank 2) use it;
# W = 40 and the documents above read blocks on both sides and keep the one-way ring.
tilesim_mpi_test("zigzag 4 ranks both mask window10 runs both ways and matches the masked reference" 4
  EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
  ARGS --set schedule.gpus=4 ${rt_mask_sched_zigzag} --set attention.causal=true
       --set attention.mask=sliding_window --set attention.window=10 --set attention.pass=both
       --check)
# Mesh 2x2 under a window of 10 < the 12-token zigzag block: chunks i, j have work iff
# |i - j| <= 1, so KV 0 never goes to rank 2 nor KV 3 to rank 1, and ranks 1 and 2 have no
# dKV partial to send (the hand-derived case of tests/test_schedules_masks.cpp).
tilesim_mpi_test("mesh 4 ranks both mask window10 cuts hops and matches the masked reference" 4
  EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
  ARGS --set schedule.gpus=4 ${rt_mask_sched_mesh} --set attention.causal=true
       --set attention.mask=sliding_window --set attention.window=10 --set attention.pass=both
       --check)
# Mesh tiles with rings of 3 and 4 members under a window narrower than the zigzag block send
# each chunk and partial straight to the members that read it (mesh_relay.hpp, direct shifts):
# 4x2 and 2x4 on 8 ranks (S = 96, blocks of 6 tokens, W = 5) and on documents, 3x3 on 9 ranks
# (S = 144, blocks of 8, W = 7; O + LSE 144*64 + 144*4 = 9792, dQ + dK + dV 9216 + 2*4608 =
# 18432 values). USP u = 2 on 8 ranks (4 ring groups) routes each KV slice to the group that
# reads it, one hop either way (route_keys_by_readers).
foreach(tile 4x2 2x4)
  string(REPLACE "x" "," tile_list ${tile})
  foreach(mask window5 documents)
    if(mask STREQUAL "window5")
      set(mask_args --set attention.mask=sliding_window --set attention.window=5)
    else()
      set(mask_args --set attention.mask=documents "--set" "attention.documents=[10,30,20,36]")
    endif()
    tilesim_mpi_test("mesh ${tile} 8 ranks both mask ${mask} sends direct and matches the masked reference" 8
      EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
      ARGS --set schedule.gpus=8 --set schedule.kind=mesh "--set" "schedule.tile=[${tile_list}]"
           --set attention.causal=true ${mask_args} --set attention.pass=both --check)
  endforeach()
endforeach()
tilesim_mpi_test("mesh 3x3 9 ranks both mask window7 sends direct and matches the masked reference" 9
  EXPECT ok REGEX "${rt_fwd} 9792 ${rt_ok}\n  ${rt_bwd} 18432 ${rt_ok}"
  ARGS --set schedule.gpus=9 --set schedule.kind=mesh "--set" "schedule.tile=[3,3]"
       --set attention.seq_len=144 --set attention.causal=true --set attention.mask=sliding_window
       --set attention.window=7 --set attention.pass=both --check)
tilesim_mpi_test("usp 8 ranks u=2 both mask window5 routes slices and matches the masked reference" 8
  EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
  ARGS --set schedule.gpus=8 --set schedule.kind=usp --set schedule.ulysses=2
       --set attention.causal=true --set attention.mask=sliding_window --set attention.window=5
       --set attention.pass=both --check)
# The double ring under masks (contiguous chunks; each chunk's KV stops after its farthest
# reader on the outer and the inner ring, its dKV straight back): 8 ranks, 4 nodes of 2
# (schedule.inner = 2), windows of 5 (< c = 12) and 20 and the documents above, both passes.
foreach(mask window5 window20 documents)
  if(mask STREQUAL "documents")
    set(mask_args --set attention.mask=documents "--set" "attention.documents=[10,30,20,36]")
  else()
    string(REPLACE "window" "" w ${mask})
    set(mask_args --set attention.mask=sliding_window --set attention.window=${w})
  endif()
  tilesim_mpi_test("double_ring 8 ranks inner 2 both mask ${mask} matches the masked reference" 8
    EXPECT ok REGEX "${rt_fwd} 6528 ${rt_ok}\n  ${rt_bwd} 12288 ${rt_ok}"
    ARGS --set schedule.gpus=8 --set schedule.kind=double_ring --set schedule.inner=2
         --set attention.causal=true ${mask_args} --set attention.pass=both --check)
endforeach()
# Head shapes (issue 14): MLA's q/k head dim 192 with v head dim 128, and head dim 256, both
# passes, checked against the reference. Values checked, S = 96, H = 4, Hkv = 2:
#   MLA forward  O S*H*dv + LSE S*H = 49152 + 384 = 49536;
#   MLA backward dQ S*H*d + dK S*Hkv*d + dV S*Hkv*dv = 73728 + 36864 + 24576 = 135168;
#   d256 forward 98304 + 384 = 98688; backward 98304 + 2 * 49152 = 196608.
foreach(kind ring allgather_kv usp)
  tilesim_mpi_test("${kind} 4 ranks MLA 192/128 both causal=true matches the reference" 4
    EXPECT ok REGEX "${rt_fwd} 49536 ${rt_ok}\n  ${rt_bwd} 135168 ${rt_ok}"
    ARGS --set schedule.gpus=4 --set schedule.kind=${kind} --set attention.head_dim=192
         --set attention.v_head_dim=128 --set attention.pass=both --set attention.causal=true
         --check)
endforeach()
tilesim_mpi_test("mesh 2x2 4 ranks head_dim 256 both matches the reference" 4
  EXPECT ok REGEX "${rt_fwd} 98688 ${rt_ok}\n  ${rt_bwd} 196608 ${rt_ok}"
  ARGS --set schedule.gpus=4 --set schedule.kind=mesh "--set" "schedule.tile=[2,2]"
       --set attention.head_dim=256 --set attention.pass=both --set attention.causal=true --check)
