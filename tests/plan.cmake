tilesim_test(test_plan SOURCES test_ring_plan.cpp test_validator.cpp test_plan_semantics.cpp
  LIBS tilesim_schedules)
