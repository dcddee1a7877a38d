tilesim_test(test_mesh SOURCES test_mesh_plan.cpp test_mesh_order.cpp test_mesh_sim.cpp
  LIBS tilesim_schedules tilesim_scenario tilesim_model)
