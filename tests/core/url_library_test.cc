// libidn2 is opened only for hosts that need IDNA (core/idn2_library.h,
// url.cc): an ASCII URL leaves it unmapped, an internationalized one maps it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/url.h"

namespace toolvfs {
namespace {

bool Mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(library) != std::string::npos;
}

// In a child, whose mappings no other test of this binary has touched.
TEST(UrlLibraryTest, AnAsciiHostDoesNotOpenLibidn2) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (Mapped("libidn2")) _exit(10);
    if (!NormalizeUrl("http://Example.COM:8080/a?b").ok() || !NormalizeUrl("https://a-b.c_d.example./").ok()) {
      _exit(11);
    }
    if (Mapped("libidn2")) _exit(12);
    if (!NormalizeUrl("http://b\xc3\xbc" "cher.example/").ok()) _exit(13);
    _exit(Mapped("libidn2") ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  // 10: mapped before any URL; 11, 13: a URL refused; 12: an ASCII host
  // opened it; 14: a non-ASCII one did not.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace toolvfs
