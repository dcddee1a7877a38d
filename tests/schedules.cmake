tilesim_test(test_schedules
  SOURCES test_schedules_valid.cpp test_schedules_bytes.cpp test_schedules_backward_bytes.cpp
          test_schedules_balance.cpp test_schedules_errors.cpp test_schedules_simulate.cpp
          test_schedules_ops.cpp test_schedules_masks.cpp test_schedules_head_shapes.cpp
          test_ring_steps.cpp
  LIBS tilesim_schedules tilesim_scenario tilesim_model)
