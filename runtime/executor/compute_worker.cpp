#include "runtime/executor/compute_worker.hpp"

#include <exception>

namespace tilesim::runtime {

ComputeWorker::ComputeWorker() : thread_([this] { loop(); }) {}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ComputeWorker::submit(int op, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(op, std::move(task));
  }
  wake_.notify_one();
}

void ComputeWorker::take_finished(std::vector<Finished>& out, std::optional<Error>& error) {
  std::lock_guard lock(mutex_);
  out.insert(out.end(), finished_.begin(), finished_.end());
  finished_.clear();
  error = error_;
}

void ComputeWorker::wait_for_finished(std::chrono::microseconds timeout) {
  std::unique_lock lock(mutex_);
  finished_cv_.wait_for(lock, timeout, [this] { return !finished_.empty() || error_.has_value(); });
}

void ComputeWorker::loop() {
  for (;;) {
    std::pair<int, std::function<void()>> item;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      if (error_) continue;  // after a failure nothing else runs
    }
    const Clock::time_point start = Clock::now();
    std::optional<Error> failure;
    try {
      item.second();
    } catch (const std::exception& e) {
      failure = Error{item.first, e.what()};
    }
    const Clock::time_point end = Clock::now();
    {
      std::lock_guard lock(mutex_);
      if (failure) {
        error_ = failure;
      } else {
        finished_.push_back(Finished{item.first, start, end});
      }
    }
    finished_cv_.notify_one();
  }
}

}  // namespace tilesim::runtime
