// libidn2 is opened only for hosts that need IDNA (core/idn2_library.h,
// url.cc): an ASCII URL leaves it unmapped, an internationalized one maps it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <idn2.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/idn2_library.h"
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

// url.cc judges ASCII hosts without libidn2 (AsciiHostIdnaError): its
// verdict and words must be the library's, host by host.
TEST(UrlLibraryTest, AsciiHostsAreJudgedAsLibidn2JudgesThem) {
  ASSERT_TRUE(LoadIdn2().ok());
  const std::string label63(63, 'x'), label64(64, 'x');
  std::vector<std::string> hosts = {"example.com", "a-b.com", "-ab.com", "ab-.com", "ab--cd.com", "a--b.com",
                                    "ab--", "-b--c.com", "ab--c-", "-" + label64, label64 + ".-b", "a_b.com", "1.2.3.4", "localhost", "example.com.", "a.-b.c",
                                    label63 + ".com", label64 + ".com", "a.b-"};
  // Whole names around the length limits: four labels of 61 (247 bytes
  // with their dots), then one short label.
  const std::string label61(61, 'y');
  const std::string four_labels = label61 + "." + label61 + "." + label61 + "." + label61;
  for (size_t length : {251, 252, 253, 254, 255, 256}) {
    const std::string name = four_labels + "." + std::string(length - four_labels.size() - 1, 'z');
    hosts.push_back(name);
    hosts.push_back(name + ".");
    hosts.push_back("-" + name);
    hosts.push_back(label64 + "." + name);
    hosts.push_back(label64 + name.substr(61));  // a long label in a name near the limit
  }
  for (const std::string& host : hosts) {
    char* converted = nullptr;
    const int code = idn2_to_ascii_8z(host.c_str(), &converted, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
    std::unique_ptr<char, decltype(&std::free)> owned(converted, &std::free);
    Result<NormalizedUrl> url = NormalizeUrl("http://" + host + "/");
    const bool refused_as_name =
        !url.ok() && url.status().message().find("not a valid internationalized name") != std::string::npos;
    EXPECT_EQ(refused_as_name, code != IDN2_OK) << host << ": " << (url.ok() ? "accepted" : url.status().message())
                                                << " / libidn2: " << idn2_strerror(code);
    if (refused_as_name && code != IDN2_OK) {
      EXPECT_NE(url.status().message().find(idn2_strerror(code)), std::string::npos) << host;
    }
  }
}

}  // namespace
}  // namespace toolvfs
