tilesim_test(test_plan SOURCES test_ring_plan.cpp test_validator.cpp test_plan_semantics.cpp test_attention_masks.cpp
  test_rank_relabel.cpp
  LIBS tilesim_schedules)
