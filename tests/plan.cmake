tilesim_test(test_plan SOURCES test_ring_plan.cpp test_validator.cpp LIBS tilesim_schedules)
