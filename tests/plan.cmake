tilesim_test(test_plan SOURCES test_ring_plan.cpp test_validator.cpp test_plan_semantics.cpp test_attention_masks.cpp
  LIBS tilesim_schedules)
