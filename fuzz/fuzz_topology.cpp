// Topology YAML (node template, links, nodes, fabric), sized for 16 GPUs under `nodes: auto`.
#include "fuzz/fuzz_support.hpp"
#include "sim/topology/topology_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const std::string path = fuzz::scratch().write("topology.yaml", data, size);
  fuzz::expect_typed_errors([&] { load_topology(path, 16); });
  return 0;
}
