// CancelToken makes its eventfd on the first fd() call (host/cancel_token.h):
// a poller must see a cancellation whether it came before or after that.
#include "host/cancel_token.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

namespace toolvfs {
namespace {

bool Readable(int fd) {
  pollfd watched{fd, POLLIN, 0};
  return poll(&watched, 1, 0) == 1 && (watched.revents & POLLIN) != 0;
}

TEST(CancelTokenTest, TheFdIsReadableOnceCancelledWhenMadeBefore) {
  CancelToken token;
  const int fd = token.fd();
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(Readable(fd));
  token.Cancel();
  EXPECT_TRUE(token.cancelled());
  EXPECT_TRUE(Readable(fd));
  EXPECT_EQ(token.fd(), fd);  // made once
}

TEST(CancelTokenTest, TheFdIsReadableWhenMadeAfterTheCancel) {
  CancelToken token;
  token.Cancel();
  const int fd = token.fd();
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(Readable(fd));
}

TEST(CancelTokenTest, ACancelRacingTheFirstFdIsNeverLost) {
  for (int round = 0; round < 200; ++round) {
    CancelToken token;
    std::thread canceller([&] { token.Cancel(); });
    const int fd = token.fd();
    canceller.join();
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(Readable(fd)) << "round " << round;
  }
}

}  // namespace
}  // namespace toolvfs
