tilesim_test(test_core SOURCES test_units.cpp test_yaml_reader.cpp LIBS tilesim_core)
