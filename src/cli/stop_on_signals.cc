#include "cli/stop_on_signals.h"

#include <pthread.h>

#include <utility>

namespace toolvfs {

StopOnSignals::StopOnSignals(std::function<void()> stop) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous_pipe_);
  waiter_ = std::thread([this, stop = std::move(stop)] {
    int taken = 0;
    while (sigwait(&signals_, &taken) != 0) {
    }
    // The destructor's own signal, sent to end this wait, is not a stop.
    if (!done_.load()) stop();
  });
}

StopOnSignals::~StopOnSignals() {
  done_.store(true);
  // Ends the wait at once (the thread takes the signal itself; it is
  // blocked everywhere else). A wait with a timeout would add up to its
  // tick to every server's exit.
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
  sigaction(SIGPIPE, &previous_pipe_, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

}  // namespace toolvfs
