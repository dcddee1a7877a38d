// Creates the backend a run asked for: "cpu" always (with MPI), "cuda" where this build has
// CUDA. Throws BackendUnavailable with a message for a user when it cannot run here (unknown
// name, not built, no GPU).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "runtime/executor/backend.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The precision the backend stores Q/KV/dO in (the reference rounds to it).
InputPrecision backend_precision(const std::string& backend);
// The largest max abs error --check accepts for outputs of a pass (cpu, fp32: forward 1e-5,
// backward 1e-4; cuda, bf16 inputs: 2e-2).
double backend_tolerance(const std::string& backend, Pass pass);

// `kernels`: the cuda backend's block kernels, "cudnn" or "own" (runtime/executor/kernel_choice).
std::unique_ptr<Backend> make_backend(const std::string& backend, const std::string& kernels,
                                      const Plan& plan, const InputData& inputs,
                                      const MpiSession& mpi, int threads);

}  // namespace tilesim::runtime
