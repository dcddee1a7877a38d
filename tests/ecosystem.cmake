# The CLI in the ways users drive it: under mpirun (sweep and tune spread over ranks), on a
# terminal (progress), and its HTML report in a browser.
if(TILESIM_HAVE_MPI)
  add_test(NAME cli_mpi_split
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/mpi_split.sh $<TARGET_FILE:tilesim>
                   ${MPIEXEC_EXECUTABLE}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_mpi_split PROPERTIES TIMEOUT 600)
endif()
add_test(NAME cli_progress
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/progress_tty.sh $<TARGET_FILE:tilesim>
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME report_chromium
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/report/check_report.sh $<TARGET_FILE:tilesim>
                 ${PROJECT_BINARY_DIR}/report-test
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(report_chromium PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
tilesim_cli_test(report_writes_page 0 "wrote .*cli-report\\.html \\([0-9]+ bytes\\)"
                 report scenarios/ring-256k.yaml -o ${PROJECT_BINARY_DIR}/cli-report.html
                 --gpus 2,4,8 --schedules ring,usp)
tilesim_cli_test(report_into_missing_directory 2 "--out: directory /nonexistent-dir does not exist"
                 report scenarios/ring-256k.yaml -o /nonexistent-dir/r.html)
tilesim_cli_test(report_bad_scenario_value 2 "key 'schedule\\.gpus'"
                 report scenarios/ring-256k.yaml -o ${PROJECT_BINARY_DIR}/cli-report-bad.html
                 --set schedule.gpus=0)
