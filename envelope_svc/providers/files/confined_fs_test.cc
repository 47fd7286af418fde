#include "envelope_svc/providers/files/confined_fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::files {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// <TEST_TMPDIR>/caseXXXXXX/{root/, outside/secret.txt, tmp/}: `root` is the confined tree.
class ConfinedFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/caseXXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_EQ(mkdir((dir_ + "/root").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((dir_ + "/outside").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((dir_ + "/tmp").c_str(), 0700), 0);
    WriteText(dir_ + "/outside/secret.txt", "secret");
    WriteText(dir_ + "/root/plain.txt", "hello");
    ASSERT_EQ(mkdir((dir_ + "/root/sub").c_str(), 0700), 0);
    case_fd_ = UniqueFd(open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    tmp_fd_ = UniqueFd(open((dir_ + "/tmp").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(case_fd_.valid());
    ASSERT_TRUE(tmp_fd_.valid());
  }

  absl::StatusOr<Location> At(std::vector<std::string> segments, bool create = false) {
    return Locate(case_fd_.get(), "root", segments, create);
  }

  std::vector<std::string> TmpEntries() {
    WalkBudget budget(clock_, absl::InfiniteFuture(), 1000, 1 << 20);
    std::vector<std::string> names;
    auto entries = ListDirectory(tmp_fd_.get(), budget);
    EXPECT_THAT(entries, IsOk());
    for (const auto& entry : *entries) names.push_back(entry.name);
    return names;
  }

  WalkBudget Budget() { return WalkBudget(clock_, absl::InfiniteFuture(), 1000, 1 << 20); }

  common::SimulatedClock clock_;
  std::string dir_;
  UniqueFd case_fd_;
  UniqueFd tmp_fd_;
};

TEST_F(ConfinedFsTest, LocatesFilesDirectoriesAndAbsentLeaves) {
  auto file = At({"plain.txt"});
  ASSERT_THAT(file, IsOk());
  EXPECT_TRUE(file->exists);
  EXPECT_EQ(file->type, EntryType::kFile);
  auto sub = At({"sub"});
  ASSERT_THAT(sub, IsOk());
  EXPECT_EQ(sub->type, EntryType::kDirectory);
  auto absent = At({"sub", "new.txt"});
  ASSERT_THAT(absent, IsOk());
  EXPECT_FALSE(absent->exists);
  auto root = At({});
  ASSERT_THAT(root, IsOk());
  EXPECT_EQ(root->leaf, "root");
  EXPECT_EQ(root->type, EntryType::kDirectory);
}

struct BadSegmentCase {
  std::string name;
  std::vector<std::string> segments;
};

class BadSegmentTest : public ConfinedFsTest,
                       public ::testing::WithParamInterface<BadSegmentCase> {};

TEST_P(BadSegmentTest, IsInvalidPath) {
  EXPECT_THAT(At(GetParam().segments, /*create=*/true),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_path"));
}

INSTANTIATE_TEST_SUITE_P(
    Segments, BadSegmentTest,
    ::testing::Values(BadSegmentCase{"DotDot", {".."}},
                      BadSegmentCase{"DotDotDeeper", {"sub", "..", "..", "outside"}},
                      BadSegmentCase{"Dot", {"."}}, BadSegmentCase{"Empty", {""}},
                      BadSegmentCase{"Absolute", {"/etc/passwd"}},
                      BadSegmentCase{"Slash", {"sub/../../outside"}},
                      BadSegmentCase{"Backslash", {"a\\b"}},
                      BadSegmentCase{"Nul", {std::string("a\0b", 3)}},
                      BadSegmentCase{"NameTooLongForTheFileSystem", {std::string(256, 'a')}}),
    [](const ::testing::TestParamInfo<BadSegmentCase>& info) { return info.param.name; });

TEST_F(ConfinedFsTest, SymlinkedFileIsNeverFollowed) {
  ASSERT_EQ(symlink("../outside/secret.txt", (dir_ + "/root/link.txt").c_str()), 0);
  ASSERT_EQ(symlink("/etc/hostname", (dir_ + "/root/abs.txt").c_str()), 0);
  for (const char* name : {"link.txt", "abs.txt"}) {
    EXPECT_THAT(At({name}), StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
    EXPECT_THAT(At({name}, /*create=*/true),
                StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  }
  EXPECT_EQ(ReadText(dir_ + "/outside/secret.txt"), "secret");
}

TEST_F(ConfinedFsTest, SymlinkedDirectoryIsNeverCrossed) {
  ASSERT_EQ(symlink("../outside", (dir_ + "/root/linkdir").c_str()), 0);
  EXPECT_THAT(At({"linkdir", "secret.txt"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  EXPECT_THAT(At({"linkdir", "new.txt"}, /*create=*/true),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  EXPECT_THAT(At({"linkdir"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  // A dangling symlink where a parent would be created is not replaced or followed.
  ASSERT_EQ(symlink("../outside/newdir", (dir_ + "/root/dangling").c_str()), 0);
  EXPECT_THAT(At({"dangling", "x.txt"}, /*create=*/true),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  struct stat st;
  EXPECT_NE(stat((dir_ + "/outside/newdir").c_str(), &st), 0);
}

TEST_F(ConfinedFsTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(mkfifo((dir_ + "/root/pipe").c_str(), 0600), 0);
  // Opening a fifo for reading would block forever with no writer: this test would hang.
  EXPECT_THAT(At({"pipe"}), StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  EXPECT_THAT(At({"pipe", "x"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
  auto budget = Budget();
  auto root = UniqueFd(open((dir_ + "/root").c_str(), O_RDONLY | O_DIRECTORY));
  auto entries = ListDirectory(root.get(), budget);
  ASSERT_THAT(entries, IsOk());
  std::vector<std::string> names;
  for (const auto& entry : *entries) names.push_back(entry.name);
  EXPECT_THAT(names, ElementsAre("plain.txt", "sub"));
}

TEST_F(ConfinedFsTest, DeviceNodeIsRefused) {
  // /dev/null's numbers; needs CAP_MKNOD (root in most sandboxes).
  if (mknod((dir_ + "/root/null").c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot create a device node here (errno " << errno << ")";
  }
  EXPECT_THAT(At({"null"}), StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
}

TEST_F(ConfinedFsTest, HardLinkedFileIsRefused) {
  // A hard link shares the inode of a file outside the root: refused for reads and writes.
  ASSERT_EQ(link((dir_ + "/outside/secret.txt").c_str(), (dir_ + "/root/hard.txt").c_str()), 0);
  EXPECT_THAT(At({"hard.txt"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
}

TEST_F(ConfinedFsTest, FileInThePathIsNotADirectory) {
  EXPECT_THAT(At({"plain.txt", "x"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not_a_directory"));
  EXPECT_THAT(At({"missing", "x"}), StatusIs(absl::StatusCode::kFailedPrecondition, "not_found"));
}

TEST_F(ConfinedFsTest, SwappedForASymlinkAfterLocateIsRefused) {
  auto located = At({"plain.txt"});
  ASSERT_THAT(located, IsOk());
  ASSERT_EQ(unlink((dir_ + "/root/plain.txt").c_str()), 0);
  ASSERT_EQ(symlink("../outside/secret.txt", (dir_ + "/root/plain.txt").c_str()), 0);
  EXPECT_THAT(OpenFileForRead(*located),
              StatusIs(absl::StatusCode::kFailedPrecondition, "path_not_permitted"));
}

TEST_F(ConfinedFsTest, ReadAllHonoursItsLimit) {
  auto located = At({"plain.txt"});
  ASSERT_THAT(located, IsOk());
  auto fd = OpenFileForRead(*located);
  ASSERT_THAT(fd, IsOk());
  EXPECT_THAT(ReadAll(fd->get(), 5), ::sharedos::common::IsOkAndHolds("hello"));
  auto again = OpenFileForRead(*located);
  EXPECT_THAT(ReadAll(again->get(), 4),
              StatusIs(absl::StatusCode::kFailedPrecondition, "file_too_large"));
  EXPECT_THAT(OpenFileForRead(*At({"sub"})),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not_a_file"));
  EXPECT_THAT(OpenFileForRead(*At({"none"})),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not_found"));
}

TEST_F(ConfinedFsTest, AtomicCreateNeverOverwritesAndLeavesNoTemporaryFile) {
  auto fresh = At({"sub", "deeper", "new.txt"}, /*create=*/true);
  ASSERT_THAT(fresh, IsOk());
  EXPECT_THAT(WriteFileAtomically(tmp_fd_.get(), *fresh, "v1", WriteMode::kCreate), IsOk());
  EXPECT_EQ(ReadText(dir_ + "/root/sub/deeper/new.txt"), "v1");
  // The same location again: it exists now.
  EXPECT_THAT(WriteFileAtomically(tmp_fd_.get(), *fresh, "v2", WriteMode::kCreate),
              StatusIs(absl::StatusCode::kFailedPrecondition, "already_exists"));
  EXPECT_EQ(ReadText(dir_ + "/root/sub/deeper/new.txt"), "v1");
  EXPECT_THAT(TmpEntries(), IsEmpty());
}

TEST_F(ConfinedFsTest, AtomicReplaceSwapsTheInode) {
  struct stat before;
  ASSERT_EQ(stat((dir_ + "/root/plain.txt").c_str(), &before), 0);
  auto located = At({"plain.txt"});
  ASSERT_THAT(located, IsOk());
  ASSERT_THAT(WriteFileAtomically(tmp_fd_.get(), *located, "new content", WriteMode::kReplace),
              IsOk());
  struct stat after;
  ASSERT_EQ(stat((dir_ + "/root/plain.txt").c_str(), &after), 0);
  // Written beside and renamed into place: readers see the old inode or the new, never a mix.
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(ReadText(dir_ + "/root/plain.txt"), "new content");
  EXPECT_THAT(TmpEntries(), IsEmpty());
}

TEST_F(ConfinedFsTest, RemoveTreeUnlinksSymlinksWithoutFollowingThem) {
  ASSERT_EQ(mkdir((dir_ + "/root/sub/inner").c_str(), 0700), 0);
  WriteText(dir_ + "/root/sub/inner/a.txt", "a");
  ASSERT_EQ(symlink("../../../outside", (dir_ + "/root/sub/inner/out").c_str()), 0);
  ASSERT_EQ(mkfifo((dir_ + "/root/sub/pipe").c_str(), 0600), 0);
  auto root = UniqueFd(open((dir_ + "/root").c_str(), O_RDONLY | O_DIRECTORY));
  auto budget = Budget();
  EXPECT_THAT(RemoveTree(root.get(), "sub", budget), IsOk());
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/root/sub").c_str(), &st), 0);
  EXPECT_EQ(ReadText(dir_ + "/outside/secret.txt"), "secret");
}

TEST_F(ConfinedFsTest, CopyTreeCopiesOnlyPlainFilesAndDirectories) {
  WriteText(dir_ + "/root/sub/a.txt", "a");
  ASSERT_EQ(symlink("../../outside/secret.txt", (dir_ + "/root/sub/link.txt").c_str()), 0);
  ASSERT_EQ(mkfifo((dir_ + "/root/sub/pipe").c_str(), 0600), 0);
  auto root = UniqueFd(open((dir_ + "/root").c_str(), O_RDONLY | O_DIRECTORY));
  auto budget = Budget();
  ASSERT_THAT(CopyTree(root.get(), "sub", tmp_fd_.get(), "copy", 1 << 20, budget), IsOk());
  EXPECT_EQ(ReadText(dir_ + "/tmp/copy/a.txt"), "a");
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/tmp/copy/link.txt").c_str(), &st), 0);
  EXPECT_NE(lstat((dir_ + "/tmp/copy/pipe").c_str(), &st), 0);
}

TEST_F(ConfinedFsTest, VersionsFollowContent) {
  auto budget = Budget();
  auto v1 = VersionOf(*At({"plain.txt"}), 1 << 20, budget);
  ASSERT_THAT(v1, IsOk());
  EXPECT_EQ(*v1, ContentVersion("hello"));
  EXPECT_EQ(v1->size(), 64u);
  auto tree1 = VersionOf(*At({}), 1 << 20, budget);
  WriteText(dir_ + "/root/sub/x.txt", "x");
  auto tree2 = VersionOf(*At({}), 1 << 20, budget);
  ASSERT_THAT(tree1, IsOk());
  ASSERT_THAT(tree2, IsOk());
  EXPECT_NE(*tree1, *tree2);
  EXPECT_EQ(*tree2, *VersionOf(*At({}), 1 << 20, budget));
}

TEST_F(ConfinedFsTest, BudgetBoundsWalks) {
  for (int i = 0; i < 5; ++i) WriteText(dir_ + "/root/sub/f" + std::to_string(i), "x");
  WalkBudget few(clock_, absl::InfiniteFuture(), 3, 1 << 20);
  EXPECT_THAT(VersionOf(*At({"sub"}), 1 << 20, few),
              StatusIs(absl::StatusCode::kFailedPrecondition, "tree_too_large"));
  WalkBudget small(clock_, absl::InfiniteFuture(), 100, 2);
  EXPECT_THAT(VersionOf(*At({"sub"}), 1 << 20, small),
              StatusIs(absl::StatusCode::kFailedPrecondition, "tree_too_large"));
  WalkBudget late(clock_, clock_.Now(), 100, 1 << 20);
  EXPECT_THAT(VersionOf(*At({"sub"}), 1 << 20, late),
              StatusIs(absl::StatusCode::kFailedPrecondition, "deadline_exceeded"));
}

}  // namespace
}  // namespace sharedos::envelope::files
