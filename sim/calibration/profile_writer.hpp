// Writes a CalibrationProfile as the YAML that load_calibration reads back
// (sim/model/calibration_profile.hpp), with a comment header saying how it was measured.
//
// Numbers are written with 6 significant digits in the loader's units (FLOP/s as GFLOP/s,
// times in us, bandwidths in GB/s, block sizes as plain token counts), so a write-then-load
// round trip reproduces every value to 1e-5 relative. Link classes the profile leaves
// undefined are written with the values of `fallback_class` and a comment saying so: the
// loader requires nvlink, pcie, upi and ib, and a topology that uses such a class then gets
// the costs of the measured one, which the comment makes visible.
#pragma once

#include <ostream>
#include <string>

#include "sim/model/calibration_profile.hpp"

namespace tilesim::calibration {

void write_profile(std::ostream& out, const CalibrationProfile& profile, const std::string& header,
                   LinkClass fallback_class);

}  // namespace tilesim::calibration
