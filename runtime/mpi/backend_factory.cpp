#include "runtime/mpi/backend_factory.hpp"

#include "runtime/cpu/cpu_backend.hpp"
#if TILESIM_HAVE_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#endif

namespace tilesim::runtime {

InputPrecision backend_precision(const std::string& backend) {
  return backend == "cuda" ? InputPrecision::bf16 : InputPrecision::fp32;
}

double backend_tolerance(const std::string& backend, Pass pass) {
  if (backend == "cuda") return 2e-2;
  return pass == Pass::fwd ? 1e-5 : 1e-4;
}

std::unique_ptr<Backend> make_backend(const std::string& backend, const std::string& kernels,
                                      const Plan& plan, const InputData& inputs,
                                      const MpiSession& mpi, int threads) {
  if (backend == "cpu") {
    return std::make_unique<CpuBackend>(plan, mpi.rank(), inputs, mpi.comm(), threads);
  }
  if (backend == "cuda") {
#if TILESIM_HAVE_CUDA
    return std::make_unique<CudaBackend>(
        plan, mpi, inputs,
        kernels == "cudnn" ? kernels::KernelFamily::cudnn : kernels::KernelFamily::own);
#else
    (void)kernels;
    throw BackendUnavailable("backend 'cuda' is not in this build (configured without CUDA)");
#endif
  }
  throw BackendUnavailable("unknown backend '" + backend + "' (expected cpu or cuda)");
}

}  // namespace tilesim::runtime
