// SIGINT / SIGTERM as a request to stop, for the verbs that write files.
//
// While an InterruptGuard lives, the two signals only set a flag (the one piece of
// process-wide state in tilesim: a signal handler can reach nothing else, and it must be a
// lock-free std::sig_atomic_t for the handler to write it safely). Long loops (the simulator's
// event loop, the regress and sweep cases) call throw_if_interrupted() at safe points; the
// Interrupted exception unwinds, so every AtomicFile unlinks its temporary and no output is
// left half written, and the CLI exits 128 + signal with a message. The guard restores the
// previous handlers (the MPI verbs keep the default ones: mpirun forwards signals to kill).
#pragma once

#include <signal.h>

#include <stdexcept>

namespace tilesim {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// The signal received since the guard was installed, 0 if none.
int pending_interrupt();
// Throws Interrupted when a signal is pending.
void throw_if_interrupted();

}  // namespace tilesim
