// A CPU "compute stream": one worker thread that runs tasks in the order they were queued and
// records each task's start and end (steady_clock). The owner polls for finished tasks; an
// exception thrown by a task is kept and reported by poll() with the task's op. The owner can
// also sleep until a task finishes (wait_for_finished), so that a compute completion is seen at
// once instead of at the next poll.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tilesim::runtime {

class ComputeWorker {
 public:
  using Clock = std::chrono::steady_clock;
  struct Finished {
    int op = -1;
    Clock::time_point start;
    Clock::time_point end;
  };
  struct Error {
    int op = -1;
    std::string message;
  };

  ComputeWorker();
  ~ComputeWorker();  // finishes the queued tasks, then joins
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  void submit(int op, std::function<void()> task);
  // Moves out the tasks finished so far; the first error, if any, is returned in `error`.
  void take_finished(std::vector<Finished>& out, std::optional<Error>& error);
  // Returns when a finished task or an error is waiting to be taken, or after `timeout`.
  void wait_for_finished(std::chrono::microseconds timeout);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;         // the worker: a task was queued or stopping
  std::condition_variable finished_cv_;  // the owner: a task finished or failed
  std::deque<std::pair<int, std::function<void()>>> queue_;
  std::vector<Finished> finished_;
  std::optional<Error> error_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace tilesim::runtime
