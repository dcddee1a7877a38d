// The job fields of the result JSON (after result_to_json's, which describe one CP group's
// plan and the job's figures): job_gpus, tp, dp, cp_groups, order, job_slowdown,
// group_alone_makespan_s, job_ops, links_used, links_shared (crossed by 2+ groups),
// max_groups_per_link and most_loaded_links (link_loads.hpp: link, name, bytes,
// capacity_bytes_per_s, busy_fraction, utilisation, rate_while_busy_bytes_per_s, groups).
#pragma once

#include <nlohmann/json.hpp>

#include "sim/job/job_layout.hpp"
#include "sim/job/job_simulation.hpp"

namespace tilesim {

void add_job_json(nlohmann::ordered_json& result, const JobLayout& layout, const JobRun& run);

}  // namespace tilesim
