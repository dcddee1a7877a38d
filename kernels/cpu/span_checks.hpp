// Size checks of the buffers handed to the CPU kernels (throw std::invalid_argument).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace tilesim::kernels::detail {

template <typename T>
void require_size(std::span<T> buffer, std::int64_t elements, const char* name) {
  if (static_cast<std::int64_t>(buffer.size()) != elements) {
    throw std::invalid_argument(std::string("attention kernel: buffer '") + name + "' has " +
                                std::to_string(buffer.size()) + " elements, expected " +
                                std::to_string(elements));
  }
}

}  // namespace tilesim::kernels::detail
