#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace fs = std::filesystem;
using testing::HasSubstr;

namespace {

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("mixtd_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

TEST(AtomicFile, WritesAndReadsBack) {
  const auto p = scratch("a.txt");
  mixtd::write_file_atomic(p, std::string_view("hello"));
  EXPECT_EQ(mixtd::read_file(p), "hello");
  mixtd::write_file_atomic(p, std::string_view("replaced"));
  EXPECT_EQ(mixtd::read_file(p), "replaced");
}

TEST(AtomicFile, FailingWriterLeavesOldContentAndNoTemporary) {
  const auto p = scratch("b.txt");
  mixtd::write_file_atomic(p, std::string_view("original"));
  EXPECT_THROW(mixtd::write_file_atomic(p,
                                        [](std::ostream& out) {
                                          out << "partial";
                                          throw mixtd::Error("boom");
                                        }),
               mixtd::Error);
  EXPECT_EQ(mixtd::read_file(p), "original");
  for (const auto& e : fs::directory_iterator(p.parent_path()))
    EXPECT_THAT(e.path().filename().string(), testing::Not(HasSubstr(".tmp.")));
}

TEST(AtomicFile, UnwritableDirectoryNamesThePath) {
  try {
    mixtd::write_file_atomic("/nonexistent-dir/x.txt", std::string_view("x"));
    FAIL() << "expected an error";
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent-dir/x.txt"));
  }
}

TEST(AtomicFile, MissingFileNamesThePath) {
  try {
    (void)mixtd::read_file("/nonexistent-dir/y.txt");
    FAIL() << "expected an error";
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent-dir/y.txt"));
  }
}

// Issue 24: replacing a directory said "cannot replace 'x': Success"
// (the error code was reused before the message was built).
TEST(AtomicFile, ADirectoryInTheWayIsNamedAsOne) {
  const auto dir = scratch("p1.weights");
  fs::create_directories(dir);
  EXPECT_THAT(
      [&] { mixtd::write_file_atomic(dir, std::string_view("x")); },
      testing::ThrowsMessage<mixtd::Error>(testing::AllOf(
          HasSubstr("cannot replace '" + dir.string() + "': it is a directory"), testing::Not(HasSubstr("Success")))));
  EXPECT_THAT([&] { (void)mixtd::read_file(dir); },
              testing::ThrowsMessage<mixtd::Error>(HasSubstr("'" + dir.string() + "': it is a directory")));
  for (const auto& e : fs::directory_iterator(dir.parent_path()))
    EXPECT_THAT(e.path().filename().string(), testing::Not(HasSubstr(".tmp.")));
}

}  // namespace
