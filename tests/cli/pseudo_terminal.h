// A pseudo-terminal for tests that play the user: the code under test
// reads and writes the slave side, the test types on the master side and
// reads what was printed there. Echo is off, so the master reads only what
// the code wrote.
#pragma once

#include <poll.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/io.h"
#include "core/unique_fd.h"

namespace toolvfs {

class PseudoTerminal {
 public:
  PseudoTerminal() {
    int master, slave;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return;
    master_.reset(master);
    slave_.reset(slave);
    struct termios settings;
    ::tcgetattr(slave, &settings);
    settings.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(slave, TCSANOW, &settings);
  }

  bool ok() const { return master_.valid(); }
  int master() const { return master_.get(); }
  int slave() const { return slave_.get(); }
  // A new descriptor of the slave side (for code that takes ownership).
  UniqueFd DupSlave() const { return UniqueFd(::dup(slave_.get())); }

  // Types `text` as the user.
  void Type(std::string_view text) { ASSERT_TRUE(WriteFull(master_.get(), text, "pty").ok()); }

  // Waits until the terminal has a whole typed line ready to be read.
  bool LineReady() {
    struct pollfd ready = {slave_.get(), POLLIN, 0};
    return ::poll(&ready, 1, 5000) == 1;
  }

  // Reads what was written to the terminal until `marker` appears (5 s at
  // most per read).
  std::string ReadUntil(std::string_view marker) {
    std::string seen;
    while (seen.find(marker) == std::string::npos) {
      struct pollfd ready = {master_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 5000) != 1) break;
      char buffer[4096];
      ssize_t got = ::read(master_.get(), buffer, sizeof buffer);
      if (got <= 0) break;
      seen.append(buffer, static_cast<size_t>(got));
    }
    return seen;
  }

 private:
  UniqueFd master_;
  UniqueFd slave_;
};

}  // namespace toolvfs
