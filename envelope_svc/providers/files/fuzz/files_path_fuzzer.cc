// Fuzzes the files provider's path resolution: proves no generated path escapes the root.
//
// A scratch directory holds the provider's root and, beside it, `outside/` with a secret file.
// Inside the root, one owner's workspace is planted with every way out a path could take: a
// symlink to `outside/`, a symlink to the secret, a hard link to the secret and a fifo. Each input
// is one Invoke: byte 0 picks the action, byte 1 the owner; the rest, split at NUL, is the path
// (segments split at '/', so "", ".", ".." and absolute-looking segments all occur), then the
// content/pattern/snapshot id argument. After every call:
//   - `outside/` holds exactly the secret file, unchanged, and the scratch directory exactly
//     `root` and `outside` (nothing was created, written or removed outside the root);
//   - inotify saw no read or change of the secret (watched by inode, so through any name, a hard
//     link included) and no entry created, removed or changed in `outside/`. (Looking for the
//     secret in results would not do: the fuzzer learns it from the comparison and sends it as
//     a path, which results echo.)
//   - EncodeOwnerId of the fuzzed bytes is a single safe directory name (never "", ".", "..",
//     never with '/').

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "sharedos/envelope/v1/envelope.pb.h"

namespace {

namespace fs = std::filesystem;
using ::sharedos::envelope::files::EncodeOwnerId;
using ::sharedos::envelope::files::FilesProvider;

constexpr char kSecret[] = "OUTSIDE-THE-ROOT-7f3a9c";
constexpr const char* kActions[] = {
    "list",    "stat",   "read",   "search",          "grep",          "create",
    "replace", "append", "delete", "snapshot:create", "snapshot:list", "snapshot:restore"};
// Calls between resets of the root (ResetIfDue). Sequences of calls stay possible (create, then
// snapshot, then restore...), and the tree stays small: snapshot:create copies the workspace, and
// every list, search, grep and snapshot walks what earlier calls left.
constexpr int kRunsPerReset = 100;

struct World {
  fs::path base;
  fs::path root;
  fs::path outside;
  std::unique_ptr<FilesProvider> provider;
  int inotify_fd = -1;
  int runs = 0;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Where the scratch tree goes: FILES_FUZZ_TMPDIR, else a memory filesystem (/dev/shm) when there
// is one, else TEST_TMPDIR or /tmp. The provider fsyncs every file it writes and the directories
// it changes; on a disk each fsync waits for the device (wall time, more so on a busy machine),
// on tmpfs it returns at once. The code under test is the same either way.
std::string ScratchParent() {
  const char* dir = std::getenv("FILES_FUZZ_TMPDIR");
  if (dir != nullptr && *dir != '\0') return dir;
  if (access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// The scratch tree, removed when the process exits normally (after -runs, or -merge).
fs::path* scratch_base = nullptr;
void RemoveScratch() {
  std::error_code ignored;
  if (scratch_base != nullptr) fs::remove_all(*scratch_base, ignored);
}

// The planted owner "agent:planted": its workspace offers every way out.
void Plant(const World& world) {
  const fs::path workspace = world.root / "agent" / "planted" / "workspace";
  fs::create_directories(workspace / "dir");
  std::ofstream(workspace / "dir" / "inside.txt") << "inside";
  fs::create_directory_symlink(world.outside, workspace / "out");
  fs::create_directory_symlink("../../../../outside", workspace / "dir" / "up");
  fs::create_symlink(world.outside / "secret.txt", workspace / "secret-link");
  fs::create_hard_link(world.outside / "secret.txt", workspace / "secret-hard");
  mkfifo((workspace / "fifo").c_str(), 0600);
}

World& GetWorld() {
  static World* world = [] {
    auto* w = new World;
    std::string pattern = ScratchParent() + "/files-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    w->base = pattern;
    scratch_base = &w->base;
    std::atexit(RemoveScratch);
    w->root = w->base / "root";
    w->outside = w->base / "outside";
    fs::create_directories(w->root);
    fs::create_directories(w->outside);
    std::ofstream(w->outside / "secret.txt") << kSecret;
    Plant(*w);
    w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->inotify_fd < 0 ||
        inotify_add_watch(w->inotify_fd, (w->outside / "secret.txt").c_str(),
                          IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) < 0 ||
        inotify_add_watch(w->inotify_fd, w->outside.c_str(),
                          IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM |
                              IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
      std::abort();
    }
    FilesProvider::Options options;
    options.root = w->root.string();
    options.max_file_bytes = 1 << 16;
    options.max_tree_entries = 2000;
    auto provider = FilesProvider::Create(options, sharedos::common::RealClock());
    if (!provider.ok()) std::abort();
    w->provider = *std::move(provider);
    return w;
  }();
  return *world;
}

// Everything the fuzzer wrote is thrown away now and then, so the tree stays small.
void ResetIfDue(World& world) {
  if (++world.runs % kRunsPerReset != 0) return;
  for (const auto& entry : fs::directory_iterator(world.root)) fs::remove_all(entry.path());
  Plant(world);
}

// How many inotify events are pending (and drops them).
int DrainEvents(const World& world) {
  alignas(struct inotify_event) char buffer[4096];
  int events = 0;
  for (;;) {
    const ssize_t n = read(world.inotify_fd, buffer, sizeof(buffer));
    if (n <= 0) return events;
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
      ++events;
    }
  }
}

void CheckNothingEscaped(const World& world) {
  if (DrainEvents(world) != 0) std::abort();
  std::set<std::string> base_entries;
  for (const auto& entry : fs::directory_iterator(world.base))
    base_entries.insert(entry.path().filename());
  if (base_entries != std::set<std::string>{"outside", "root"}) std::abort();
  std::set<std::string> outside_entries;
  for (const auto& entry : fs::directory_iterator(world.outside))
    outside_entries.insert(entry.path().filename());
  if (outside_entries != std::set<std::string>{"secret.txt"}) std::abort();
  if (fs::is_symlink(world.outside / "secret.txt")) std::abort();
  if (ReadFile(world.outside / "secret.txt") != kSecret) std::abort();
}

void CheckOwnerDirectory(absl::string_view id) {
  const std::string dir = EncodeOwnerId(id);
  if (dir.empty() || dir == "." || dir == ".." || dir.find('/') != std::string::npos ||
      dir.find('\0') != std::string::npos || dir.size() > 255) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  World& world = GetWorld();
  ResetIfDue(world);
  absl::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::vector<std::string> fields = absl::StrSplit(rest, absl::MaxSplits('\0', 2));
  fields.resize(3);
  CheckOwnerDirectory(fields[0]);

  sharedos::envelope::v1::InvokeRequest request;
  request.set_call_id("call-1");
  request.set_action(kActions[data[0] % (sizeof(kActions) / sizeof(kActions[0]))]);
  auto* resource = request.mutable_resource();
  resource->set_namespace_("files");
  static const char* kOwners[] = {"planted", "..", ".", "a/b"};
  if (data[1] & 4) {
    resource->mutable_owner()->set_human_user_id(fields[2].substr(0, 64));
  } else {
    resource->mutable_owner()->set_agent_id(kOwners[data[1] & 3]);
  }
  std::string joined;
  if (!fields[0].empty()) {
    for (absl::string_view segment : absl::StrSplit(fields[0], '/')) {
      resource->add_path(std::string(segment));
    }
  }
  auto& args = *request.mutable_arguments()->mutable_fields();
  args["path"].set_string_value(fields[0]);
  args["content"].set_string_value(fields[1]);
  args["pattern"].set_string_value(fields[1]);
  args["query"].set_string_value(fields[1]);
  args["snapshotId"].set_string_value(fields[1]);
  args["recursive"].set_bool_value(data[1] & 8);
  if (data[1] & 16) args["limit"].set_number_value(data[1] >> 5);

  DrainEvents(world);  // This fuzzer's own reads of the secret, in the previous check.
  absl::StatusOr<sharedos::protocol::v1::ToolResult> result =
      world.provider->Invoke(request, absl::Now() + absl::Seconds(10));
  if (!result.ok()) std::abort();  // Always a ToolResult (files_provider.h).
  CheckNothingEscaped(world);
  return 0;
}
