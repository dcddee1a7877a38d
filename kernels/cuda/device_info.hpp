// Whether a CUDA device can be used here, and a small RAII device buffer. Plain C++ header.
#pragma once

#include <cstddef>
#include <string>

namespace tilesim::kernels {

// False (never a crash) when cudaGetDeviceCount fails or finds no device; `why` (optional)
// then says why, e.g. "cudaGetDeviceCount: no CUDA-capable device is detected".
bool cuda_device_available(std::string* why);

// Throws std::runtime_error "<what>: <CUDA error string>" if the last CUDA call failed.
void cuda_check_last_error(const char* what);

// Blocks until all work on `stream` (a cudaStream_t as void*, nullptr = default) is done.
void cuda_synchronize(void* stream);

// Owns `bytes` of device memory (cudaMalloc/cudaFree); move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

  void upload(const void* host, std::size_t bytes);    // synchronous copy host -> device
  void download(void* host, std::size_t bytes) const;  // synchronous copy device -> host
  void fill_zero();

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace tilesim::kernels
