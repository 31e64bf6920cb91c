#include "config/url_check.h"

#include <gtest/gtest.h>

namespace toolvfs {
namespace {

std::string Why(std::string_view url) {
  Status status = CheckUrlPrefix(url);
  EXPECT_FALSE(status.ok()) << url;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(UrlCheckTest, AcceptsHttpAndHttpsPrefixes) {
  for (std::string_view url :
       {"https://api.github.com/repos/", "http://example.com", "HTTPS://Example.COM/A",
        "https://a.com:1/", "https://a.com:65535", "https://a.com:00443/x",
        "http://127.0.0.1:8080/", "http://[::1]/", "http://[::ffff:127.0.0.1]:80/",
        "https://b\xC3\xBC"
        "cher.example/",
        "https://a.com./", "https://a.com/%7Euser/x%2Fy", "https://my_host.internal/"}) {
    EXPECT_TRUE(CheckUrlPrefix(url).ok()) << url << ": " << CheckUrlPrefix(url).ToString();
  }
}

TEST(UrlCheckTest, RejectsMalformedPrefixes) {
  EXPECT_EQ(Why(""), "is empty");
  EXPECT_EQ(Why("api.github.com/repos"), "has no scheme; write it as https://HOST/PATH");
  EXPECT_EQ(Why("//api.github.com/"), "has no scheme; write it as https://HOST/PATH");
  EXPECT_EQ(Why("https:/a.com"), "has no scheme; write it as https://HOST/PATH");
  EXPECT_EQ(Why("ftp://a.com/"), "has the scheme 'ftp'; only http and https are supported");
  EXPECT_EQ(Why("file:///etc/passwd"), "has the scheme 'file'; only http and https are supported");
  EXPECT_EQ(Why("https://"), "has no host");
  EXPECT_EQ(Why("https:///x"), "has no host");
  EXPECT_EQ(Why("https://:443/"), "has no host");
  EXPECT_EQ(Why("https://user@a.com/"),
            "has user information ('user@'); credentials never belong in a URL prefix");
  EXPECT_EQ(Why("https://a.com@evil.com/"),
            "has user information ('user@'); credentials never belong in a URL prefix");
  EXPECT_EQ(Why(std::string_view("https://a.com\0.evil/", 20)), "contains a NUL byte");
  EXPECT_EQ(Why("https://a.com/\r\n"), "contains a line break (CR or LF)");
  EXPECT_EQ(Why("https://a.com\n/"), "contains a line break (CR or LF)");
  EXPECT_EQ(Why("https://a.com/\t"), "contains a control character");
  EXPECT_EQ(Why("https://a.com/a b"), "contains a space; percent-encode it as %20");
  EXPECT_EQ(Why("https://a.com\\@evil.com/"), "contains a backslash");
  EXPECT_EQ(Why("https://a%2e.com/"), "has a '%' in the host");
  EXPECT_EQ(Why("http://[fe80::1%25eth0]/"), "has a '%' in the host");
  EXPECT_EQ(Why("https://a*.com/"), "has the character '*' in the host");
  EXPECT_EQ(Why("https://a..com/"), "has an empty label in the host");
  EXPECT_EQ(Why("https://.a.com/"), "has an empty label in the host");
  EXPECT_EQ(Why("https://./"), "has an empty label in the host");
  EXPECT_EQ(Why("https://a.com:/"), "has an empty port after ':'");
  EXPECT_EQ(Why("https://a.com:0/"), "has a port outside 1-65535");
  EXPECT_EQ(Why("https://a.com:65536/"), "has a port outside 1-65535");
  EXPECT_EQ(Why("https://a.com:99999999999999999999/"), "has a port outside 1-65535");
  EXPECT_EQ(Why("https://a.com:-1/"), "has a port that is not a number");
  EXPECT_EQ(Why("https://a.com:https/"), "has a port that is not a number");
  EXPECT_EQ(Why("https://a.com:80:80/"), "has a port that is not a number");
  EXPECT_EQ(Why("http://[::1/"), "has an unclosed '[' in the host");
  EXPECT_EQ(Why("http://[]/"), "has an empty IPv6 address in the host");
  EXPECT_EQ(Why("http://[xyz]/"), "has a malformed IPv6 address in the host");
  EXPECT_EQ(Why("http://[::1]x/"), "has text after the IPv6 address in the host");
  EXPECT_EQ(Why("https://a.com/x?y=1"),
            "has a query or fragment; a URL prefix is matched on scheme, host, port and path only");
  EXPECT_EQ(Why("https://a.com#frag"),
            "has a query or fragment; a URL prefix is matched on scheme, host, port and path only");
  EXPECT_EQ(Why("https://a.com/%zz"), "has a malformed percent-escape in the path");
  EXPECT_EQ(Why("https://a.com/%2"), "has a malformed percent-escape in the path");
}

// Whatever the policy's NormalizeUrl refuses is refused here too, so no
// rule is silently ignored; the reason does not repeat the URL.
TEST(UrlCheckTest, RejectsWhatThePolicyCouldNotNormalize) {
  for (std::string_view url : {"http://127.1/", "http://0x7f.0.0.1/", "http://2130706433/",
                               "http://017.0.0.1/", "https://a.com/..%2Fadmin"}) {
    std::string why = Why(url);
    EXPECT_EQ(why.find(url), std::string::npos) << why;
    EXPECT_FALSE(why.empty()) << url;
  }
}

}  // namespace
}  // namespace toolvfs
