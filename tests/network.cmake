tilesim_test(test_network
  SOURCES test_flow_network.cpp test_flow_network_max_min.cpp test_flow_network_incremental.cpp
          test_flow_network_differential.cpp test_max_min_classes.cpp
  LIBS tilesim_network)
