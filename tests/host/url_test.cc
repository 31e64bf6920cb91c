// URL normalization and the network policy (policy/url.h,
// policy/network_policy.h; SPEC.md §3.2 "Network"): the host-validation
// corpus of issue 4, segment-aware prefixes, and allow / deny / uncovered.

#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "policy/network_policy.h"
#include "core/url.h"

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

// NormalizeUrl(url) as ToString(), or "error: MESSAGE".
std::string Normalized(std::string_view url) {
  Result<NormalizedUrl> normalized = NormalizeUrl(url);
  if (!normalized.ok()) return "error: " + normalized.status().message();
  return normalized->ToString();
}

NormalizedUrl Url(std::string_view url) {
  Result<NormalizedUrl> normalized = NormalizeUrl(url);
  EXPECT_TRUE(normalized.ok()) << normalized.status().message();
  return normalized.ok() ? *normalized : NormalizedUrl{};
}

TEST(UrlTest, NormalizesSchemeHostAndPort) {
  EXPECT_EQ(Normalized("HTTP://API.GitHub.COM/Repos"), "http://api.github.com/Repos");
  EXPECT_EQ(Normalized("https://example.com"), "https://example.com/");
  EXPECT_EQ(Normalized("https://example.com:443/a"), "https://example.com/a");
  EXPECT_EQ(Normalized("http://example.com:080/"), "http://example.com/");
  EXPECT_EQ(Normalized("http://example.com:443/"), "http://example.com:443/");
  EXPECT_EQ(Normalized("http://example.com:65535"), "http://example.com:65535/");
  EXPECT_EQ(Normalized("http://example.com./a"), "http://example.com/a");
  EXPECT_EQ(Normalized("http://under_score.example/"), "http://under_score.example/");

  NormalizedUrl url = Url("HTTPS://Example.COM.:8443/x?q=1");
  EXPECT_EQ(url.scheme, "https");
  EXPECT_EQ(url.host, "example.com");
  EXPECT_EQ(url.port, 8443);
  EXPECT_EQ(url.path, "/x");
  EXPECT_EQ(url.query, "q=1");
  EXPECT_EQ(Url("http://example.com").port, 80);
  EXPECT_EQ(Url("https://example.com").port, 443);
}

TEST(UrlTest, ConvertsInternationalNamesToALabels) {
  EXPECT_EQ(Normalized("http://bücher.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Normalized("http://BÜCHER.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Normalized("http://XN--BCHER-KVA.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Normalized("http://faß.de/"), "http://xn--fa-hia.de/");  // non-transitional
}

TEST(UrlTest, KeepsIpv4AndNormalizesIpv6Literals) {
  EXPECT_EQ(Normalized("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/");
  EXPECT_EQ(Normalized("http://[::1]:8080/"), "http://[::1]:8080/");
  EXPECT_EQ(Normalized("http://[0:0:0:0:0:0:0:1]/"), "http://[::1]/");
  EXPECT_EQ(Normalized("http://[2001:DB8:0:0::1]/"), "http://[2001:db8::1]/");
  EXPECT_EQ(Url("http://[::1]/").host, "::1");
  // IPv4-mapped stays IPv6: it is another host to an allow rule.
  EXPECT_EQ(Normalized("http://[::FFFF:127.0.0.1]/"), "http://[::ffff:127.0.0.1]/");
  EXPECT_EQ(Normalized("http://[::ffff:7f00:1]/"), "http://[::ffff:127.0.0.1]/");
}

TEST(UrlTest, NormalizesPathAndQuery) {
  EXPECT_EQ(Normalized("http://x/a/./b/../c"), "http://x/a/c");
  EXPECT_EQ(Normalized("http://x/a/.."), "http://x/");
  EXPECT_EQ(Normalized("http://x/../../a"), "http://x/a");
  EXPECT_EQ(Normalized("http://x/a/b/"), "http://x/a/b/");
  // Escapes of unreserved characters decoded (so "%2e%2e" is a dot
  // segment), the others upper-case; unsafe bytes escaped.
  EXPECT_EQ(Normalized("http://x/%7euser/%2fx/%e2%82%ac"), "http://x/~user/%2Fx/%E2%82%AC");
  EXPECT_EQ(Normalized("http://x/repos/%2e%2e/admin"), "http://x/admin");
  EXPECT_EQ(Normalized("http://x/é\"<>"), "http://x/%C3%A9%22%3C%3E");
  EXPECT_EQ(Normalized("http://x/group%2Fproject/issues"), "http://x/group%2Fproject/issues");
  EXPECT_EQ(Normalized("http://x/p?q=%7e&to=http%3a%2F%2Fy/?z"), "http://x/p?q=~&to=http%3A%2F%2Fy/?z");
}

// The host-validation corpus of issue 4 and the spellings other parsers
// read as something else.
TEST(UrlTest, RejectsAmbiguousOrMalformedUrls) {
  struct Case {
    std::string url;
    std::string reason;
  };
  const Case cases[] = {
      {std::string("http://exa\0mple.com/", 20), "contains a NUL byte"},
      {"http://example.com\r\n.evil/", "contains a line break (CR or LF)"},
      {"http://example.com\n/", "contains a line break (CR or LF)"},
      {"http://exa\tmple.com/", "contains a control character"},
      {"http://exa mple.com/", "contains a space"},
      {"http://example.com\\@evil/", "contains a backslash"},
      {"http://exa%6dple.com/", "has a '%' in the host"},
      {"http://user@example.com/", "has user information ('user@')"},
      {"http://a:b@example.com/", "has user information ('user@')"},
      {"http:///a", "has no host"},
      {"http://:80/", "has no host"},
      {"http://example.com:0/", "has a port outside 1-65535"},
      {"http://example.com:65536/", "has a port outside 1-65535"},
      {"http://example.com:/", "has an empty port after ':'"},
      {"http://example.com:8a/", "has a port that is not a number"},
      {"ftp://example.com/", "does not start with http:// or https://"},
      {"example.com/a", "does not start with http:// or https://"},
      {"", "is empty"},
      {"http://a..b/", "has an empty label in the host"},
      {"http://.a/", "has an empty label in the host"},
      {"http://example.com../", "has an empty label in the host"},
      {"http://\xe2\x80\x8b.com/", "has an empty label in the host"},         // zero-width space
      {"http://evil.com\xef\xbc\x8f.example.org/", "has the character '/'"},  // fullwidth solidus
      {"http://xn--zzzz.example/", "is not a valid internationalized name"},
      {"http://\xff.com/", "is not a valid internationalized name"},
      // ASCII hosts are checked as libidn2 would, without it (url.cc).
      {"http://" + std::string(64, 'a') + ".com/", "domain label longer than 63 characters"},
      {"http://" + std::string(250, 'a').replace(60, 1, ".").replace(120, 1, ".").replace(180, 1, ".").replace(240, 1, ".") + ".com/",
       "domain name longer than 255 characters"},
      {"http://-a.com/", "string start/ends with forbidden hyphen"},
      {"http://a.b-/", "string start/ends with forbidden hyphen"},
      {"http://AB--cd.com/", "string contains forbidden two hyphens pattern"},
      {"http://127.1/", "not a dotted-decimal IPv4 address"},
      {"http://0x7f.0.0.1/", "not a dotted-decimal IPv4 address"},
      {"http://0x7f.1/", "not a dotted-decimal IPv4 address"},
      {"http://017.0.0.1/", "not a dotted-decimal IPv4 address"},
      {"http://2130706433/", "not a dotted-decimal IPv4 address"},
      {"http://1.2.3.256/", "not a dotted-decimal IPv4 address"},
      {"http://1.2.3.4.5/", "not a dotted-decimal IPv4 address"},
      {"http://foo.0x10/", "not a dotted-decimal IPv4 address"},
      {"http://[::1%25eth0]/", "has a '%' in the host"},
      {"http://[::g]/", "has a malformed IPv6 address"},
      {"http://[127.0.0.1]/", "has a malformed IPv6 address"},
      {"http://[::1/", "has an unclosed '['"},
      {"http://[::1]x/", "has text after the IPv6 address"},
      {"http://x/a#top", "has a fragment"},
      {"http://x/%zz", "has a malformed percent-escape"},
      {"http://x/a%2", "has a malformed percent-escape"},
      {"http://x/repos/..%2Fadmin", "has a dot segment hidden behind an encoded slash or a ';'"},
      {"http://x/repos/%2E%2E%5Cadmin", "has a dot segment hidden behind an encoded slash or a ';'"},
      {"http://x/repos/..;/admin", "has a dot segment hidden behind an encoded slash or a ';'"},
      {"http://x/repos//../admin", "has both an empty segment ('//') and a dot segment"},
  };
  for (const Case& test : cases) {
    std::string result = Normalized(test.url);
    EXPECT_THAT(result, HasSubstr(test.reason)) << test.url;
    EXPECT_TRUE(result.starts_with("error: URL '")) << result;
  }
  // One message in full: the URL as written, then the reason.
  EXPECT_EQ(Normalized("http://a@b/"),
            "error: URL 'http://a@b/' has user information ('user@'); credentials never belong in a URL");
}

// What the host hands curl normalizes to itself: no second reading of a
// URL differs from the first.
TEST(UrlTest, NormalizingIsIdempotent) {
  for (std::string_view url :
       {"HTTP://API.GitHub.COM:80/Repos/./a/../b?q=%7e", "http://bücher.example./%e2%82%ac/%2fx",
        "http://[0:0::FFFF:7f00:1]:8080/a/", "https://x/é\"<>?a=b&c=%2f", "http://x/group%2Fproject/..?"}) {
    std::string once = Normalized(url);
    EXPECT_EQ(Normalized(once), once) << url;
  }
}

TEST(UrlTest, SameOriginComparesSchemeHostAndPort) {
  EXPECT_TRUE(Url("http://x/a").SameOrigin(Url("HTTP://X:80/b?c")));
  EXPECT_FALSE(Url("http://x/").SameOrigin(Url("https://x/")));
  EXPECT_FALSE(Url("http://x/").SameOrigin(Url("http://x:8080/")));
  EXPECT_FALSE(Url("http://x/").SameOrigin(Url("http://y/")));
}

TEST(UrlPrefixTest, MatchesWholeSegments) {
  NormalizedUrl repos = Url("https://api.github.com/repos");
  EXPECT_TRUE(UrlPrefixCovers(repos, Url("https://api.github.com/repos")));
  EXPECT_TRUE(UrlPrefixCovers(repos, Url("https://api.github.com/repos/x?y=1")));
  EXPECT_FALSE(UrlPrefixCovers(repos, Url("https://api.github.com/repository")));
  EXPECT_FALSE(UrlPrefixCovers(repos, Url("https://api.github.com/")));

  NormalizedUrl below = Url("https://api.github.com/repos/");
  EXPECT_TRUE(UrlPrefixCovers(below, Url("https://api.github.com/repos/x")));
  EXPECT_TRUE(UrlPrefixCovers(below, Url("https://api.github.com/repos/")));
  EXPECT_FALSE(UrlPrefixCovers(below, Url("https://api.github.com/repos")));
  // Dot segments are resolved before matching.
  EXPECT_FALSE(UrlPrefixCovers(below, Url("https://api.github.com/repos/../admin")));
  EXPECT_FALSE(UrlPrefixCovers(below, Url("https://api.github.com/repos/%2e%2e/admin")));

  NormalizedUrl origin = Url("https://api.github.com");
  EXPECT_TRUE(UrlPrefixCovers(origin, Url("https://API.github.com./anything")));
  EXPECT_FALSE(UrlPrefixCovers(origin, Url("http://api.github.com/")));
  EXPECT_FALSE(UrlPrefixCovers(origin, Url("https://api.github.com:8443/")));
  EXPECT_FALSE(UrlPrefixCovers(origin, Url("https://api.github.com.evil.example/")));
  EXPECT_FALSE(UrlPrefixCovers(origin, Url("https://evil.example/api.github.com")));
}

ToolConfig NetworkTool(std::vector<std::string> allow, std::vector<std::string> deny,
                       std::vector<std::string> envs = {}) {
  ToolConfig tool;
  tool.name = "web";
  tool.has_sandbox_table = true;
  tool.sandbox.network_allow = std::move(allow);
  tool.sandbox.network_deny = std::move(deny);
  tool.sandbox.network_envs = std::move(envs);
  return tool;
}

std::string Decide(const NetworkPolicy& policy, std::string_view url) {
  PolicyDecision decision = policy.Check(Url(url));
  std::string text(DecisionName(decision.decision));
  if (!decision.rule.empty()) text += " by " + decision.rule;
  if (!decision.hint.empty()) text += "; " + decision.hint;
  return text;
}

TEST(UrlNetworkPolicyTest, AllowDenyAndUncovered) {
  NetworkPolicy policy = NetworkPolicy::ForTool(
      NetworkTool({"https://api.github.com/repos/", "https://API.GitHub.com/repos/acme/secret/public"},
                  {"https://api.github.com/repos/acme/secret"}));
  EXPECT_EQ(Decide(policy, "https://api.github.com/repos/a/b"),
            "allow by network.allow \"https://api.github.com/repos/\"");
  // Deny wins, even over a longer allow prefix.
  EXPECT_EQ(Decide(policy, "https://api.github.com/repos/acme/secret/public/x"),
            "deny by network.deny \"https://api.github.com/repos/acme/secret\"");
  EXPECT_EQ(Decide(policy, "https://api.github.com/repos/acme/secret"),
            "deny by network.deny \"https://api.github.com/repos/acme/secret\"");
  EXPECT_EQ(Decide(policy, "https://api.github.com/repos/acme/secretive"),
            "allow by network.allow \"https://api.github.com/repos/\"");
  EXPECT_EQ(Decide(policy, "https://api.github.com/user?x=1"),
            "uncovered; add a prefix of \"https://api.github.com/user\" to network.allow");
  EXPECT_EQ(Decide(policy, "http://api.github.com/repos/a"),
            "uncovered; add a prefix of \"http://api.github.com/repos/a\" to network.allow");
  EXPECT_TRUE(policy.AllowsAny());
}

TEST(UrlNetworkPolicyTest, EmptyAllowListAndNoSandboxTableAllowNothing) {
  NetworkPolicy empty = NetworkPolicy::ForTool(NetworkTool({}, {}));
  EXPECT_EQ(Decide(empty, "https://x/"), "uncovered; add a prefix of \"https://x/\" to network.allow");
  EXPECT_FALSE(empty.AllowsAny());

  ToolConfig no_table = NetworkTool({"https://x/"}, {});
  no_table.has_sandbox_table = false;
  EXPECT_EQ(Decide(NetworkPolicy::ForTool(no_table), "https://x/"),
            "uncovered; add a prefix of \"https://x/\" to network.allow");
}

// An IPv4-mapped literal reaches the same machine as the IPv4 address: a
// deny rule for one covers the other; an allow rule covers only what it
// names, so "[::ffff:127.0.0.1]" is asked about when only 127.0.0.1 is
// allowed.
TEST(UrlNetworkPolicyTest, Ipv4MappedAddressesAreDeniedButNotAllowedByIpv4Rules) {
  NetworkPolicy policy = NetworkPolicy::ForTool(
      NetworkTool({"http://127.0.0.1/"}, {"http://169.254.169.254/", "http://[::ffff:10.0.0.1]/"}));
  EXPECT_EQ(Decide(policy, "http://127.0.0.1/x"), "allow by network.allow \"http://127.0.0.1/\"");
  EXPECT_EQ(Decide(policy, "http://[::ffff:127.0.0.1]/x"),
            "uncovered; add a prefix of \"http://[::ffff:127.0.0.1]/x\" to network.allow");
  EXPECT_EQ(Decide(policy, "http://[::ffff:169.254.169.254]/latest"),
            "deny by network.deny \"http://169.254.169.254/\"");
  EXPECT_EQ(Decide(policy, "http://[::ffff:a9fe:a9fe]/latest"),
            "deny by network.deny \"http://169.254.169.254/\"");
  EXPECT_EQ(Decide(policy, "http://10.0.0.1/"), "deny by network.deny \"http://[::ffff:10.0.0.1]/\"");
}

TEST(UrlNetworkPolicyTest, VariablesAndDescription) {
  NetworkPolicy policy = NetworkPolicy::ForTool(
      NetworkTool({"https://api.github.com/repos/"}, {"https://api.github.com/repos/x"}, {"GITHUB_TOKEN"}));
  EXPECT_TRUE(policy.MayUseVariable("GITHUB_TOKEN"));
  EXPECT_FALSE(policy.MayUseVariable("GITHUB"));
  EXPECT_FALSE(policy.MayUseVariable("HOME"));
  EXPECT_THAT(policy.Describe(), ::testing::ElementsAre("network.allow \"https://api.github.com/repos/\"",
                                                        "network.deny \"https://api.github.com/repos/x\"",
                                                        "network.envs \"GITHUB_TOKEN\""));
}

// A prefix the config parser let through but NormalizeUrl rejects (the two
// parsers differ on numeric hosts) never matches, and `toolvfs check` says so.
TEST(UrlNetworkPolicyTest, PrefixThatDoesNotNormalizeNeverMatches) {
  NetworkPolicy policy = NetworkPolicy::ForTool(NetworkTool({"http://127.1/"}, {}));
  EXPECT_FALSE(policy.AllowsAny());
  EXPECT_THAT(policy.Describe(),
              ::testing::Contains(HasSubstr("network.allow \"http://127.1/\" (ignored: URL")));
}

}  // namespace
}  // namespace toolvfs
