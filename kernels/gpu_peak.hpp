// Dense bf16 tensor-core peak of a GPU, from the device name CUDA reports, so that kernel
// throughput can be stated as a share of what the chip can do. Figures are NVIDIA datasheet
// values without sparsity: H100 / H200 / H800 SXM 989 TFLOP/s, H100 NVL and H200 NVL 835,
// H100 PCIe 756, A100 / A800 312, L40S 362. Unknown names give 0 (no share is computed).
#pragma once

#include <string_view>

namespace tilesim::kernels {

double dense_bf16_peak_flops(std::string_view device_name);

}  // namespace tilesim::kernels
