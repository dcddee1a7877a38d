// Runs task(0) .. task(count - 1) on up to `threads` std::threads (threads <= 1: inline).
// Tasks are handed out round-robin by index; every thread is joined before returning and the
// first exception thrown by a task is rethrown on the caller's thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tilesim::kernels::detail {

template <typename Task>
void run_parallel_tasks(std::int64_t count, int threads, const Task& task) {
  const std::int64_t workers =
      std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(count, 1));
  if (workers == 1) {
    for (std::int64_t t = 0; t < count; ++t) task(t);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(workers));
    for (std::int64_t w = 0; w < workers; ++w) {
      pool.emplace_back([&, w] {
        try {
          for (std::int64_t t = w; t < count; t += workers) task(t);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      });
    }
  }  // jthreads join here
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tilesim::kernels::detail
