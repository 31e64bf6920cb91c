#include "core/lazy_library.h"

#include <gtest/gtest.h>

#include <string>

namespace toolvfs {
namespace {

constexpr const char* kCosine[] = {"cos"};

TEST(LazyLibraryTest, ResolvesSymbolsOnFirstUse) {
  LazyLibrary library("libm.so.6", "the test", "libc6", kCosine);
  ASSERT_TRUE(library.Load().ok()) << library.Load().ToString();
  auto cosine = reinterpret_cast<double (*)(double)>(library.Address(0));
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  EXPECT_STREQ(library.error_text(), "");
}

TEST(LazyLibraryTest, MissingLibraryIsOneLineNamingFileUseAndReason) {
  LazyLibrary library("libtoolvfs-no-such-library.so.7", "the test", "libtoolvfs-none", kCosine);
  const Status& status = library.Load();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(),
            "Cannot load libtoolvfs-no-such-library.so.7, needed for the test (Debian package libtoolvfs-none): "
            "libtoolvfs-no-such-library.so.7: cannot open shared object file: No such file or directory");
  EXPECT_EQ(library.Address(0), nullptr);
  EXPECT_EQ(std::string(library.error_text()), status.message());
  // The outcome is kept, not retried.
  EXPECT_EQ(&library.Load(), &status);
}

TEST(LazyLibraryTest, MissingSymbolIsUnsupportedNamingIt) {
  constexpr const char* kSymbols[] = {"cos", "toolvfs_no_such_function"};
  LazyLibrary library("libm.so.6", "the test", "libc6", kSymbols);
  const Status& status = library.Load();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_EQ(status.message(),
            "libm.so.6 has no toolvfs_no_such_function, needed for the test: the installed libc6 is older than "
            "the one toolvfs was built with");
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
  EXPECT_EQ(library.Address(0), nullptr);
}

}  // namespace
}  // namespace toolvfs
