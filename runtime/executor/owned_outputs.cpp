#include "runtime/executor/owned_outputs.hpp"

namespace tilesim::runtime {

OutputChecks digest_and_check_outputs(const Plan& plan, int rank, Backend& backend,
                                      const InputData& inputs, bool check, OutputDigest& digest) {
  ReferenceOutputs reference(plan, inputs);
  OutputChecks checks;
  for (int obj = 0; obj < static_cast<int>(plan.objects.size()); ++obj) {
    const DataObject& d = plan.object(obj);
    if (!d.output || d.home_rank != rank) continue;
    const std::vector<float> data = backend.read_object(obj);
    digest.add(obj, data);
    if (!check) continue;
    const bool forward = d.tensor == Tensor::o || d.tensor == Tensor::lse;
    (forward ? checks.forward : checks.backward).combine(check_output(plan, reference, obj, data));
  }
  return checks;
}

}  // namespace tilesim::runtime
