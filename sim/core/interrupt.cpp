#include "sim/core/interrupt.hpp"

#include <csignal>
#include <string>

namespace tilesim {
namespace {

// The process-wide flag (see the header for why it is the one exception to "no globals").
volatile std::sig_atomic_t received_signal = 0;

extern "C" void record_signal(int signal) { received_signal = signal; }

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(std::string("interrupted by ") +
                         (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                         "; no output file was changed"),
      signal_(signal) {}

InterruptGuard::InterruptGuard() {
  received_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

int pending_interrupt() { return received_signal; }

void throw_if_interrupted() {
  if (const int s = received_signal; s != 0) throw Interrupted(s);
}

}  // namespace tilesim
