#include "runtime/executor/kernel_choice.hpp"

#include <stdexcept>

namespace tilesim::runtime {

bool cudnn_kernels_built() { return TILESIM_CUDNN_KERNELS != 0; }

std::string resolve_kernels(const std::string& backend, const std::string& requested) {
  if (requested != "" && requested != "cudnn" && requested != "own") {
    throw std::invalid_argument("--kernels " + requested + ": expected cudnn or own");
  }
  if (backend != "cuda") {
    if (requested == "cudnn") {
      throw std::invalid_argument("--kernels cudnn: the " + backend +
                                  " backend runs its CPU kernels; cuDNN needs --backend cuda");
    }
    return "own";
  }
  if (requested == "cudnn" && !cudnn_kernels_built()) {
    throw std::invalid_argument(
        "--kernels cudnn: this tilesim was built without the cuDNN kernels (no CUDA and NCCL, "
        "or the cuDNN frontend headers were not found at configure: run tools/install-deps.sh "
        "and configure again); --kernels own runs the project's CUDA kernels");
  }
  if (requested.empty()) return cudnn_kernels_built() ? "cudnn" : "own";
  return requested;
}

}  // namespace tilesim::runtime
