// A full disk and a read-only data directory under load (issue 22). sharedosd keeps its data
// directory on a tmpfs of its own; while clients run turns and issue grants, the test first fills
// the file system to the last few KiB, then remounts it read-only. In each fault, calls fail
// closed (a refusal with its code, or an error status — never an allowed call the record lacks),
// sharedosd stays up, and when space or write access returns it serves again without a restart.
// Afterwards the campaign's checks hold: nothing acknowledged lost, the chain verifies.
//
// Mounting needs root (CAP_SYS_ADMIN); elsewhere the test is skipped, saying why.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "capability/reason_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos::crash {
namespace {

namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::SharedosdDeployment;

constexpr char kTmpfsSize[] = "size=256m";

// A tmpfs mounted for the test, unmounted (lazily) at the end.
class Tmpfs {
 public:
  explicit Tmpfs(std::string dir) : dir_(std::move(dir)) {
    mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, kTmpfsSize) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  bool Remount(bool read_only) {
    return mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | (read_only ? MS_RDONLY : 0),
                 kTmpfsSize) == 0;
  }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

// Fills the file system holding `path` until fewer than `keep` bytes are free.
void Fill(const std::string& path, size_t keep) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  const std::string block(64 * 1024, 'f');
  for (;;) {
    struct statvfs fs;
    ASSERT_EQ(fstatvfs(fd, &fs), 0);
    const size_t free_bytes = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < keep) break;
    const size_t chunk = std::min(block.size(), free_bytes - keep / 2);
    if (write(fd, block.data(), chunk) <= 0) break;
  }
  close(fd);
}

// Prints each file of `dir` with its size (what holds the space).
void ListFiles(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> listing(opendir(dir.c_str()), closedir);
  if (listing == nullptr) return;
  while (const dirent* entry = readdir(listing.get())) {
    struct stat info;
    const std::string path = dir + "/" + entry->d_name;
    if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      std::printf("  %10lld %s\n", static_cast<long long>(info.st_size), entry->d_name);
    }
  }
}

// The refusals the clients met so far, counted.
int Refusals(Ledger& ledger) {
  absl::MutexLock lock(&ledger.mu);
  int total = 0;
  for (const auto& [what, count] : ledger.refusals) total += count;
  return total;
}

// True for the code of a fail-closed refusal: the kernel could not decide or record (its
// authority, usage store, delegation chain, host policy or audit log unreachable) or stopped
// under the turn. A turn carries its verdict (ADR 0024); this test, reading only the code an
// OpenTurn answered, tells a fault's refusals from a decision by the code.
bool IsFailClosedRefusal(absl::string_view code) {
  return code == capability::kAuthorityUnavailable || code == capability::kUsageStoreUnavailable ||
         code == capability::kDelegationChainUnverified ||
         code == capability::kHostPolicyUnavailable || code == capability::kAuditUnavailable ||
         code == capability::kOperationAborted;
}

// Opens fresh turns until one is answered by a decision rather than a fail-closed refusal (it
// opens, or is denied for a reason of its grants, such as the bounded grant's grant_exhausted:
// either way its records were written), or `timeout` passes (printing the last refusal).
bool ServesAgain(const std::string& address, const std::string& host, absl::Duration timeout) {
  auto envelope = envelope::v1::Envelope::NewStub(Connect(address));
  const absl::Time give_up = absl::Now() + timeout;
  std::string last;
  for (int n = 0; absl::Now() < give_up; ++n) {
    envelope::v1::OpenTurnResponse opened;
    const std::string execution = absl::StrCat("exec-probe-", absl::ToUnixMicros(absl::Now()));
    const grpc::Status status = envelope->OpenTurn(
        As(host, absl::Seconds(2)).get(), demo::TurnRequest(execution, "trace-probe"), &opened);
    last = status.ok() ? opened.result().ShortDebugString() : status.error_message();
    const std::string code = opened.result().error().code();
    if (status.ok() && (!opened.has_result() || !IsFailClosedRefusal(code))) {
      if (!opened.has_result()) {
        envelope::v1::CancelTurnRequest cancel;
        cancel.set_turn_id(opened.turn_id());
        envelope::v1::CancelTurnResponse cancelled;
        envelope->CancelTurn(As(host, absl::Seconds(2)).get(), cancel, &cancelled);
      }
      return true;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  std::printf("still refused: %s\n", last.c_str());
  return false;
}

TEST(DiskFaultTest, FullAndReadOnlyDataDirectoryFailClosedAndRecover) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string dir = MakeDir("disk");
  const std::string mount_point = MakeDir("disk-data");
  Tmpfs tmpfs(mount_point);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << tmpfs.error();

  SharedosdDeployment::Options options;
  options.data_dir = mount_point + "/sharedosd";
  options.files_root = dir + "/files";
  ASSERT_TRUE(demo::WriteWorkspace(options.files_root).ok());
  auto started = SharedosdDeployment::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<SharedosdDeployment> sharedosd = *std::move(started);
  const std::string address = sharedosd->address();
  IssueBoundedGrant(address, sharedosd->admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  Ledger ledger;
  Clients clients(sharedosd->admin_token(), sharedosd->host_token(), ledger);
  clients.Aim(Targets{address, address, address});
  clients.Start(/*turn_runners=*/2);
  absl::SleepFor(absl::Milliseconds(300));

  // Full: the filler leaves a few KiB; the next commits run out of space.
  const int before_full = Refusals(ledger);
  Fill(mount_point + "/filler", 8 * 1024);
  absl::SleepFor(absl::Seconds(1));
  const int during_full = Refusals(ledger) - before_full;
  std::printf("disk full: %d refusals in 1 s\n", during_full);
  EXPECT_GT(during_full, 0) << "the fault was never reached";
  EXPECT_EQ(kill(sharedosd->pid(), 0), 0) << "sharedosd died on a full disk";
  ASSERT_EQ(unlink((mount_point + "/filler").c_str()), 0);
  EXPECT_TRUE(ServesAgain(address, sharedosd->host_token(), absl::Seconds(15)))
      << "no turn opened after space returned";
  ListFiles(options.data_dir);

  // Read-only. Linux refuses to remount a file system read-only while files on it are open for
  // writing (EBUSY), so a data directory turns read-only only between runs: sharedosd must then
  // refuse to start, saying why, and start again on the same data once it is writable.
  clients.Stop();
  ASSERT_TRUE(sharedosd->Stop().ok());
  ASSERT_TRUE(tmpfs.Remount(/*read_only=*/true)) << std::strerror(errno);
  {
    auto refused = SharedosdDeployment::Start(options);
    EXPECT_FALSE(refused.ok()) << "sharedosd served from a read-only data directory";
    EXPECT_THAT(std::string(refused.status().message()),
                ::testing::HasSubstr("is not writable: Read-only file system"));
    std::printf("read-only data directory: %s\n", refused.status().ToString().c_str());
  }
  ASSERT_TRUE(tmpfs.Remount(/*read_only=*/false)) << std::strerror(errno);
  started = SharedosdDeployment::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  sharedosd = *std::move(started);
  const std::string again = sharedosd->address();
  EXPECT_TRUE(ServesAgain(again, sharedosd->host_token(), absl::Seconds(15)));
  CheckAfterCampaign(Targets{again, again, again}, sharedosd->admin_token(), ledger);
  EXPECT_TRUE(sharedosd->Stop().ok());
}

}  // namespace
}  // namespace sharedos::crash
