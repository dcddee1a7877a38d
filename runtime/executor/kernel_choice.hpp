// Which block kernels a run or calibration uses (`--kernels cudnn|own`).
//
// The cpu backend has one set, its CPU kernels ("own"). The cuda backend runs cuDNN fused
// attention ("cudnn", the kernels users train with; blocks cuDNN cannot express fall back to
// the own kernels, kernels/cuda/block_kernels.hpp) or the project's own WMMA kernels ("own",
// the reference). The default is cudnn where this build has it, else own.
#pragma once

#include <string>

namespace tilesim::runtime {

// Whether this build's cuda backend has the cuDNN kernels.
bool cudnn_kernels_built();

// `requested` is "" (the default), "cudnn" or "own"; returns "cudnn" or "own". Throws
// std::invalid_argument with a message for a user when cudnn is asked for and cannot be had
// (the cpu backend, or a build without the cuDNN kernels).
std::string resolve_kernels(const std::string& backend, const std::string& requested);

}  // namespace tilesim::runtime
