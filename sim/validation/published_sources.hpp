// validation/sources.yaml: every source that a default profile value or a published case cites,
// and the source(s) each default profile value was fitted from.
//
//   topologies: ../topologies               # where the profiles are, relative to this file
//   sources:
//     fa3-readme: "Dao-AILab/flash-attention README: FlashAttention-3 forward, H100 SXM"
//   profiles:
//     h100.calib.yaml:
//       compute.peak: nvidia-h100-datasheet
//       compute.backward: [fa2-readme, fa3-readme]
//       links.nvlink.flow_cap: nccl-tests-268
//
// source_problems() lists what breaks the separation of fitting from validation: an undeclared
// source id; a value of a listed profile (compute.<key>, links.<class>.<field>) without a
// source, or a source entry for a key the profile lacks; a `fit` case whose source no profile
// value was fitted from; a `held-out` case whose source some profile value was fitted from.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/validation/published_case.hpp"

namespace tilesim::validation {

struct SourceRegistry {
  std::string file;
  std::string topologies_dir;                  // resolved
  std::map<std::string, std::string> sources;  // id -> citation
  // profile file name -> value key -> source ids
  std::map<std::string, std::map<std::string, std::vector<std::string>>> profiles;

  std::set<std::string> fitted_ids() const;  // every id some profile value names
};

// InputError (file, line, key) when malformed.
SourceRegistry load_sources(const std::string& path);

// The value keys a profile file has: compute.<key> and links.<class>.<field> (gpu is a label).
std::vector<std::string> profile_value_keys(const std::string& profile_path);

std::vector<std::string> source_problems(const SourceRegistry& registry,
                                         const std::vector<PublishedCase>& cases);

}  // namespace tilesim::validation
