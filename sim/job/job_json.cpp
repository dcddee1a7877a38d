#include "sim/job/job_json.hpp"

namespace tilesim {

void add_job_json(nlohmann::ordered_json& j, const JobLayout& layout, const JobRun& run) {
  j["job_gpus"] = layout.gpus();
  j["tp"] = layout.tp();
  j["dp"] = layout.dp();
  j["cp_groups"] = layout.cp_groups();
  j["order"] = to_string(layout.order());
  j["job_slowdown"] = run.slowdown;
  j["group_alone_makespan_s"] = static_cast<double>(run.group_alone_makespan_ps) * 1e-12;
  j["job_ops"] = run.job_ops;
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const LinkLoad& l : run.links.top) {
    links.push_back({{"link", l.link},
                     {"name", l.name},
                     {"bytes", l.bytes},
                     {"capacity_bytes_per_s", l.capacity_bytes_per_s},
                     {"busy_fraction", l.busy_fraction},
                     {"utilisation", l.utilisation},
                     {"rate_while_busy_bytes_per_s", l.rate_while_busy_bytes_per_s},
                     {"groups", l.groups}});
  }
  j["links_used"] = run.links.links_used;
  j["links_shared"] = run.links.links_shared;
  j["max_groups_per_link"] = run.links.max_groups;
  j["most_loaded_links"] = links;
  if (run.symmetry) {
    // Whole groups as classes (job_symmetry.hpp): exact, so only how many ran is added.
    const int group_ranks = layout.cp();
    j["symmetry"] = {{"classes", run.symmetry->classes},
                     {"exact", true},
                     {"groups_simulated", run.symmetry->classes / group_ranks}};
  }
}

}  // namespace tilesim
