// One plan for a whole job: the CP group's plan repeated once per group on the group's GPUs.
//
// Group g's copy has ranks g x P .. g x P + P-1 (P = the group plan's ranks), its own chunks
// and data objects (ids offset by g x the group's counts), peers offset like the ranks, and
// rank r of group g placed on JobLayout::gpu_of(g, s) where s is the GPU slot the group plan
// gives r (its placement, identity when empty). The copies share no rank and no object, so
// each copy is valid exactly when the group plan is: validate the group once, not the job
// (the validator checks one attention's coverage, and would report every later copy's blocks
// as duplicates of the first's). The copies meet only on the fabric, where the simulator's
// max-min model shares the links their transfers cross.
#pragma once

#include <vector>

#include "sim/job/job_layout.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

// rank -> job GPU for group `group` of the layout.
std::vector<int> group_placement(const Plan& group_plan, const JobLayout& layout, int group);

// rank -> job GPU for every rank of the job plan (group-major: rank g x P + r).
std::vector<int> job_placement(const Plan& group_plan, const JobLayout& layout);

// The job plan of the first `groups` CP groups (all of them when groups < 0): ranks
// 0 .. groups x P - 1 of the whole job plan, with their programs, chunks, objects and GPUs.
// A quotient of whole groups (job_symmetry.hpp) is this plan for the representatives' groups.
// Throws std::invalid_argument when the group plan's ranks differ from the layout's CP size or
// groups exceeds the layout's.
Plan compose_job_plan(const Plan& group_plan, const JobLayout& layout, int groups = -1);

}  // namespace tilesim
