# Calibration, validation and cost-model regression: fits on synthetic data, profile round
# trips, the shared-cores simulator model, and the CLI loops (regress, calibrate -> run ->
# validate, published figures).
tilesim_test(test_calibration
  SOURCES test_calibration_fits.cpp test_calibration_profile_io.cpp test_calibration_cores.cpp
          test_calibration_run_fit.cpp
  LIBS tilesim_calibration tilesim_model tilesim_scenario)
tilesim_test(test_validation
  SOURCES test_validation_timeline.cpp test_validation_run_identity.cpp test_validation_error_stats.cpp
          test_validation_published.cpp
  LIBS tilesim_validation tilesim_model tilesim_scenario)

add_test(NAME regress COMMAND $<TARGET_FILE:tilesim> regress tests/regress/
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(regress PROPERTIES TIMEOUT 60)
# Published figures: held-out multi-GPU cases and fit cases (validation/README.md).
add_test(NAME validate_published
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/validate_published.sh $<TARGET_FILE:tilesim>
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(validate_published PROPERTIES TIMEOUT 60)
# CI's loop: the full calibration, then 6 runs (ring, zigzag, mesh on 2 and 4 ranks, 1K-2K
# tokens), fastest of 5 each. On a quiet host it stays well inside the issue's 10% / 25%
# (four loops: median 3.6-3.9%, max 7.9-9.6%); CI allows 15% / 35% and a second attempt,
# because CI hosts are shared and a loaded one measured a full loop at 14.5% / 49.5%. A
# broken fit, unit or shared-cores model is off by far more (4 ranks on 2 cores predicted
# as if each had a core measured -52% to -53% on the 4-rank runs), on both attempts.
if(TILESIM_HAVE_MPI)
  add_test(NAME calibration_loop
           COMMAND bash ${PROJECT_SOURCE_DIR}/tools/calibration-loop.sh --quick
                   --tilesim $<TARGET_FILE:tilesim> --mpirun ${MPIEXEC_EXECUTABLE}
                   --work ${CMAKE_CURRENT_BINARY_DIR}/calibration-loop --median 0.15 --max 0.35
                   --attempts 2
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # Label `timing`: it measures this host's wall clock and is run by hand on a quiet machine
  # (ctest -L timing), not by the default test command. On 2026-12-01 eight attempts on this
  # host, including four of the unchanged code of the last landed commit, all fell outside
  # 15% / 35% (medians 17.7-26.8%) with errors of both signs a minute apart (-33% in one
  # attempt, +55% in the next): the host's speed drifted between calibration and runs, so the
  # gate measured the host, not the model.
  set_tests_properties(calibration_loop PROPERTIES LABELS timing TIMEOUT 300 RUN_SERIAL TRUE ENVIRONMENT
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")

  # One rank (one GPU): compute measured, links copied from --links-from.
  add_test(NAME calibrate_one_rank
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/calibrate_one_rank.sh
                   $<TARGET_FILE:tilesim> ${CMAKE_CURRENT_BINARY_DIR}/calibrate-one-rank
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  tilesim_cli_test(calibrate_one_rank_needs_links 2
                   "--links-from: one rank measures no link.*mpirun -np 2 or more"
                   calibrate --backend cpu --quick --out ${CMAKE_CURRENT_BINARY_DIR}/unused.calib.yaml)
  tilesim_cli_test(calibrate_links_from_missing 2 "--links-from: no-such\\.calib\\.yaml: cannot open file"
                   calibrate --backend cpu --quick --out ${CMAKE_CURRENT_BINARY_DIR}/unused.calib.yaml
                   --links-from no-such.calib.yaml)
  # calibrate_one_rank is labelled `timing` too: it checks a one-rank run of this host against
  # the profile it just measured (35% bound), and on 2026-12-01 it failed at host load 15-25
  # with errors of 58-335% and passed on reruns minutes later, in a clean-clone CI check too.
  set_tests_properties(calibrate_one_rank PROPERTIES LABELS timing)
  set_tests_properties(calibrate_one_rank cli_calibrate_one_rank_needs_links
                       cli_calibrate_links_from_missing PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
