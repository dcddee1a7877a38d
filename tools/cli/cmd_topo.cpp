// tilesim topo FILE [--gpus N] [--dot] [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/core/input_error.hpp"
#include "sim/topology/topology_loader.hpp"
#include "sim/topology/topology_summary.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"

namespace tilesim::cli {

void add_topo(CLI::App& app, int& exit_code) {
  struct Args {
    std::string file;
    int gpus = 0;
    bool dot = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* verb = app.add_subcommand("topo", "Summarise a topology: GPUs, links, bandwidths");
  verb->add_option("file", args->file, "Topology YAML file")->required();
  verb->add_option("--gpus", args->gpus,
                   "Size a `nodes: auto` topology for this many GPUs (a fixed one must have "
                   "at least as many)")
      ->check(CLI::Range(1, 1 << 20));
  verb->add_flag("--dot", args->dot, "Print the graph in Graphviz DOT instead");
  verb->add_flag("--json", args->json, "Print the summary as JSON");
  verb->callback([args, &exit_code] {
    exit_code = run_guarded([&] {
      const Topology topology = load_topology(args->file, args->gpus);
      const int has = topology.gpu_count();
      if (args->gpus > has) {
        throw InputError(args->file, 0, "--gpus",
                         fmt::format("at most {} GPUs, the number this topology has (asked {})",
                                     has, args->gpus));
      }
      if (args->dot) {
        fmt::print("{}", to_dot(topology));
        return kExitOk;
      }
      const TopologySummary s = summarize(topology);
      if (args->json) {
        nlohmann::ordered_json j;
        j["name"] = s.name;
        j["gpu"] = s.gpu_model;
        j["gpus"] = s.gpus;
        j["nodes"] = s.nodes;
        j["gpus_per_node"] = s.gpus_per_node;
        j["devices"] = s.devices;
        j["devices_per_kind"] = s.devices_per_kind;
        j["cables"] = s.cables;
        j["links_per_class"] = s.links_per_class;
        j["intra_node_injection_bytes_per_s_per_gpu"] = s.intra_node_injection_bytes_per_s_per_gpu;
        j["network_injection_bytes_per_s_per_gpu"] = s.network_injection_bytes_per_s_per_gpu;
        j["bisection_bytes_per_s"] = s.bisection_bytes_per_s;
        fmt::print("{}\n", j.dump(2));
        return kExitOk;
      }
      fmt::print("{}", format_summary(s));
      return kExitOk;
    });
  });
}

}  // namespace tilesim::cli
