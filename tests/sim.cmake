tilesim_test(test_sim SOURCES test_simulator_ring.cpp test_simulator_determinism.cpp test_flow_transfer_model.cpp
             test_simulator_schedules.cpp test_calibration_profile.cpp test_compute_efficiency.cpp
             test_simulator_streaming.cpp test_gpu_counts.cpp
             LIBS tilesim_model tilesim_scenario)

# Symmetric simulation: one rank per class equals every rank simulated (issue 13 item 4).
tilesim_test(test_symmetry SOURCES test_symmetric_simulation.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_verbs)

# sweep's per-phase figures from the streamed totals, against records (symmetric and lazy runs).
tilesim_test(test_sweep_phase_stats SOURCES test_sweep_phase_stats.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_verbs)

# The role quotient (schedule.symmetry: roles): one node's ranks stand for every node.
tilesim_test(test_rank_roles SOURCES test_rank_roles.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_verbs)

# The ring family's quotient generated step by step through the windowed tracker (issue 13 item 1).
tilesim_test(test_windowed_tracker SOURCES test_windowed_tracker.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)
# The ring family's and USP's forward of every rank generated as it runs (issue 13 item 1
# without symmetry).
tilesim_test(test_lazy_plan SOURCES test_lazy_plan.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules tilesim_verbs)
# USP's forward quotient generated a piece at a time, against the whole quotient.
tilesim_test(test_usp_windowed SOURCES test_usp_windowed.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)
# The double ring's quotient (every pass) generated an inner step at a time, likewise.
tilesim_test(test_double_ring_windowed SOURCES test_double_ring_windowed.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)

# The tuner's branch and bound against every candidate simulated whole (issue 13, tune at scale).
tilesim_test(test_tune_search SOURCES test_tune_search.cpp LIBS tilesim_model tilesim_scenario)
# tune's candidates run, and are refused, as `simulate` runs the same scenario.
tilesim_test(test_candidate_run SOURCES test_candidate_run.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)
tilesim_test(test_mesh_symmetry SOURCES test_mesh_symmetry.cpp test_mesh_fold.cpp
             test_double_ring_symmetry.cpp test_usp_symmetry.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)
# pass-Q, all-gather KV and Ulysses: every rank sends to every other (the offset quotient).
tilesim_test(test_all_peers_symmetry SOURCES test_all_peers_symmetry.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_schedules)
# compare's --schedules accepts every label tune prints, with tune's settings.
tilesim_test(test_schedule_list SOURCES test_schedule_list.cpp
             LIBS tilesim_verbs tilesim_scenario tilesim_schedules)

# The work-block quotient of the causal zigzag and striped rings (schedule.symmetry: roles, auto
# beyond 256 GPUs): one block's programs stand for every block's.
tilesim_test(test_work_block SOURCES test_work_block.cpp symmetry_fixture.cpp
             LIBS tilesim_model tilesim_scenario tilesim_verbs tilesim_schedules)
