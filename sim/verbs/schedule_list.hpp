// The --schedules syntax of `compare`: comma-separated entries, each
//   KIND            any name of kScheduleKinds, with the scenario's settings
//   mesh:AxB        mesh with tile [A, B] (mesh:AxB/node-major or /kv-group-major: and
//                   that placement, as tune names its tiles)
//   mesh:auto       mesh with the tile and placement the tuner finds fastest
//   usp:U / usp:UxR / usp:uU  usp with U-way Ulysses (R is implied by the GPU count)
//   double_ring:K / double_ring:innerK  double ring with inner rings of K ranks
//   ring:work, allgather_kv:work (or :layout)  tokens dealt by attention work (or not);
//                   other kinds ignore schedule.balance, so it is reset for them
//   all             every kind of kScheduleKinds (mesh as mesh:auto)
// e.g. "ring,mesh:4x4,mesh:8x2,mesh:auto"; every label tune prints is accepted. An unknown
// name is an InputError.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/schedule_tuner.hpp"

namespace tilesim {

std::vector<ScheduleCandidate> parse_schedule_list(const std::string& text,
                                                   const ScheduleSpec& base);

}  // namespace tilesim
