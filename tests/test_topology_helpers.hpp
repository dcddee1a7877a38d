// Shared helpers for the topology tests: shipped file paths and temp YAML files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim::test {

inline std::string shipped(const std::string& file) {
  return std::string(TILESIM_SOURCE_DIR) + "/topologies/" + file;
}

// Writes `text` to a fresh file in the temp directory and returns its path.
inline std::string write_temp_yaml(const std::string& text) {
  static int counter = 0;
  const auto path =
      std::filesystem::temp_directory_path() /
      ("tilesim_topo_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

// Device names along a route, source first.
inline std::vector<std::string> route_names(const Topology& topo, const Route& route) {
  std::vector<std::string> names;
  if (route.links.empty()) return names;
  names.push_back(topo.device(topo.link_source(route.links.front())).name);
  for (LinkId l : route.links) names.push_back(topo.device(topo.link_target(l)).name);
  return names;
}

}  // namespace tilesim::test
