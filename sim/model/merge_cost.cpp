#include "sim/model/merge_cost.hpp"

namespace tilesim {

MergeCost merge_cost(const Plan& plan, std::span<const int> partials,
                     std::span<const int> accumulators) {
  MergeCost cost;
  for (int obj : partials) cost.bytes += plan.object(obj).bytes;
  if (plan.merge_form == MergeForm::one_pass) {
    for (int obj : accumulators) cost.bytes += 2.0 * plan.object(obj).bytes;
    cost.launches = 1;
    return cost;
  }
  for (int obj : accumulators) {
    const DataObject& acc = plan.object(obj);
    switch (acc.tensor) {
      case Tensor::o:  // P + 9A in all, the partial's P counted with the reads
        cost.bytes += 9.0 * acc.bytes;
        cost.launches += 4;
        break;
      case Tensor::lse:  // 13 L in all, the partial's L counted with the reads
        cost.bytes += 12.0 * acc.bytes;
        cost.launches += 5;
        break;
      case Tensor::dkv:  // dk and dv folded by one in-place add each
        cost.bytes += 2.0 * acc.bytes;
        cost.launches += 2;
        break;
      default:  // dq += block_dq
        cost.bytes += 2.0 * acc.bytes;
        cost.launches += 1;
        break;
    }
  }
  return cost;
}

}  // namespace tilesim
