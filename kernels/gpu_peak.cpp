#include "kernels/gpu_peak.hpp"

namespace tilesim::kernels {

double dense_bf16_peak_flops(std::string_view name) {
  auto has = [name](std::string_view part) { return name.find(part) != std::string_view::npos; };
  // Variants first: "NVIDIA H100 PCIe" also contains "H100".
  if (has("H100") || has("H200") || has("H800")) {
    if (has("NVL")) return 835e12;
    if (has("PCIe")) return 756e12;
    return 989e12;  // SXM: "NVIDIA H100 80GB HBM3", "NVIDIA H200"
  }
  if (has("A100") || has("A800")) return 312e12;
  if (has("L40S")) return 362e12;
  return 0.0;
}

}  // namespace tilesim::kernels
