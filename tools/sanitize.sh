#!/usr/bin/env bash
# CI's sanitizer and fuzz stages (called by .ci/run after the main build and tests; each stage
# can run alone: tools/sanitize.sh asan|tsan|fuzz).
#   asan  the whole ctest suite under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA,
#         no benchmarks, no Python), leaks included outside the mpirun runs (OpenMPI's own
#         allocations that live to exit are suppressed, tools/sanitizers/lsan.supp; the mpirun
#         runs check memory errors and UB without leaks, below). The tests labelled timing are left out, as
#         in tools/test.sh: they time this host, which ASan slows several-fold; so are the mpirun
#         runs labelled repeats_covered_path (tests/runtime.cmake: another run here takes the
#         same executor path; the Release suite runs them all).
#   tsan  the runtime's threaded parts under ThreadSanitizer: test_runtime, test_kernels (the
#         CPU kernels' worker threads), and the mpirun runs of `tilesim run` that exercise the
#         executor's compute worker and watchdog (ring, mesh, 2 kernel threads per rank, a
#         failing and a hanging rank) and the runtime fault tests.
#   fuzz  the libFuzzer targets: every seed and kept regression input replayed (ctest), then
#         TILESIM_FUZZ_SECONDS (default 10) of fuzzing per target.
# Build trees: build-asan (clang, ASan + UBSan + libFuzzer's coverage, unity build: one tree
# for the asan and fuzz stages, so CI compiles the instrumented code once) and build-tsan.
# Exit non-zero on the first failing stage.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TILESIM_JOBS:-2}
fuzz_seconds=${TILESIM_FUZZ_SECONDS:-10}
# Stages may come as separate arguments or as one word list ("asan fuzz"); none runs nothing.
read -r -a stages <<< "$*"
[ ${#stages[@]} -eq 0 ] && stages=(asan tsan fuzz)
[ "${stages[*]}" = none ] && exit 0
supp=$PWD/tools/sanitizers
# No CUDA, no benchmarks, no Python extension: the main build compiles and tests those; the
# sanitizer trees build only what their tests run.
common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILESIM_WERROR=ON -DTILESIM_CUDA=OFF
        -DTILESIM_BENCHMARKS=OFF -DTILESIM_PYTHON=OFF)
# The ASan and TSan trees build at -O1 -g1 (line tables only, enough for stack traces): a cold
# ASan+UBSan tilesim_core costs 1.5x its Release build so, 2.6x at RelWithDebInfo's -O2 -g
# (docs/reliability.md has the figures).
sanitizer_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
# The tsan stage's mpirun runs: one per threaded path of the executor (compute worker and
# watchdog under ring and mesh, 2 kernel threads per rank, a failing and a hanging rank) and
# the runtime fault tests; every other mpirun run repeats these paths with other shapes.
tsan_runs="runtime: (ring 4 ranks causal=true matches|mesh 2x2 causal=true matches"
tsan_runs+="|ring 4 ranks both causal=true with 2 kernel threads|a failing rank|a hanging rank)"
tsan_runs+="|runtime fault"
# The tests whose processes initialise MPI: those that launch ranks with mpirun
# (tests/runtime.cmake, reliability.cmake, ecosystem.cmake) and the one-rank `calibrate` runs,
# an MPI singleton (tests/calibration.cmake), whose OpenMPI components leak alike.
mpi_tests="^runtime|^cli_mpi_split$|^cli_calibrate_one_rank_needs_links$|^cli_calibrate_links_from_missing$"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# The asan/fuzz tree needs clang and its libFuzzer runtime: the project's install script has them.
install_clang_deps() {
  local runtime
  runtime=$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
  [ -f "$runtime" ] || bash tools/install-deps.sh
}

# The asan and fuzz stages share one tree: clang with ASan + UBSan and libFuzzer's edge
# counters (TILESIM_FUZZ_COVERAGE=counters: without comparison tracing, which slowed the
# suite's simulation tests 2.5-2.8x) on every library, at -O1 -g1, as a unity build
# (CMake's batches of 8 TUs: 0.64 of the plain build's CPU time under ASan,
# docs/reliability.md). The unit tests and CLI runs run in it as in any ASan tree; the fuzz
# targets link libFuzzer's driver on top.
configure_asan_tree() {
  install_clang_deps
  CC=clang CXX=clang++ cmake -S . -B build-asan "${common[@]}" "${sanitizer_flags[@]}" \
    "${launcher[@]}" -DTILESIM_FUZZ=ON -DTILESIM_FUZZ_COVERAGE=counters -DCMAKE_UNITY_BUILD=ON
}

# CPU seconds (user + sys) of this script's finished children, from /proc: CI time is estimated
# from CPU time, which barely depends on how loaded the host is (docs/reliability.md).
children_cpu_s() { awk '{ printf "%d", ($16 + $17) / 100 }' /proc/$$/stat; }
stage_start() { echo "== sanitize: $1 =="; stage_t0=$(date +%s); stage_cpu0=$(children_cpu_s); }
stage_end() {
  echo "== sanitize: $1 done in $(( $(date +%s) - stage_t0 )) s," \
    "$(( $(children_cpu_s) - stage_cpu0 )) CPU s =="
}

for stage in "${stages[@]}"; do
  case "$stage" in
    asan)
      stage_start asan
      configure_asan_tree
      cmake --build build-asan -j"$jobs"
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # The simulation-equality tests stop at 64 GPUs here (tests/gpu_counts.hpp: the same
      # code paths as at 256, which cost 20-50x their Release time under the sanitizers).
      export TILESIM_TEST_MAX_GPUS=64
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0 \
        ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs" \
          -LE "timing|repeats_covered_path" -E "$mpi_tests"
      # The MPI runs with leak detection off: OpenMPI unloads its dlopen'ed components
      # at MPI_Finalize, before LeakSanitizer's exit-time scan, so their allocations show as
      # "<unknown module>" and no suppression by library name matches them (every mpirun run
      # failed so in the first full asan run). Memory errors and UB are still fatal there;
      # tilesim's own leaks are checked by the unit tests and the CLI runs above.
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
        ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs" \
          -LE "timing|repeats_covered_path" -R "$mpi_tests"
      unset UBSAN_OPTIONS TILESIM_TEST_MAX_GPUS
      stage_end asan
      ;;
    tsan)
      stage_start tsan
      # Only the threaded code is instrumented (runtime/, kernels/, the CLI that drives the
      # executor, the tests), at -O1 -g1; the simulator libraries (sim/) run on one thread and
      # compile as in the Release build, whose objects ccache then already holds.
      cmake -S . -B build-tsan "${common[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DTILESIM_SANITIZE=thread -DTILESIM_SANITIZE_DIRS="runtime;kernels;tools/cli;tests" \
        -DTILESIM_SANITIZE_OPTIONS="-O1;-g1" \
        -DTILESIM_TEST_MODULES="runtime;reliability;kernels"
      cmake --build build-tsan -j"$jobs" --target tilesim test_runtime test_kernels
      export TSAN_OPTIONS=suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1
      build-tsan/tests/test_runtime
      build-tsan/tests/test_kernels  # the CPU kernels' worker threads (threads 2, 3, 4)
      ctest --test-dir build-tsan --output-on-failure --no-tests=error -j"$jobs" -R "$tsan_runs"
      unset TSAN_OPTIONS
      stage_end tsan
      ;;
    fuzz)
      stage_start fuzz
      configure_asan_tree
      cmake --build build-asan -j"$jobs" --target fuzz_scenario fuzz_topology fuzz_calibration \
        fuzz_regress_case fuzz_published_case fuzz_measured_run fuzz_plan
      ASAN_OPTIONS=detect_leaks=1 \
        ctest --test-dir build-asan --output-on-failure --no-tests=error -R "fuzz replay"
      for target in build-asan/fuzz/fuzz_*; do
        name=$(basename "$target")
        [ "$name" = fuzz_seed_measured_run ] && continue
        corpus=build-asan/fuzz/corpus/${name#fuzz_}
        work=$(mktemp -d)
        echo "-- $name: ${fuzz_seconds} s"
        "$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
          -dict=fuzz/tilesim.dict -artifact_prefix="$work/" -print_final_stats=1 \
          "$work" "$corpus" 2>&1 | grep -E "^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" || true
        if ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* > /dev/null 2>&1; then
          echo "$name found a failing input:"; ls "$work"; exit 1
        fi
        rm -rf "$work"
      done
      stage_end fuzz
      ;;
    *) echo "unknown stage $stage (asan|tsan|fuzz)"; exit 2 ;;
  esac
done
