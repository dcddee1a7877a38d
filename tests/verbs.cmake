# The verbs' item map (sim/verbs) and the report's link utilisation (sim/report).
tilesim_test(test_verbs SOURCES test_verbs_item_map.cpp test_report_link_utilisation.cpp
             LIBS tilesim_verbs tilesim_report)
