#include "envelope_svc/providers/files/confined_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/random.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"

namespace sharedos::envelope::files {
namespace {

// Deepest directory nesting a walk descends (path segments are ≤ 64 by contract).
constexpr int kMaxDepth = 128;
// NAME_MAX of the file systems we run on.
constexpr size_t kMaxNameBytes = 255;
constexpr mode_t kFileMode = 0644;
constexpr mode_t kDirectoryMode = 0700;

absl::Status ErrnoError(int error) {
  switch (error) {
    case ENOENT:
      return FsError(kNotFound);
    case EEXIST:
    case ENOTEMPTY:
      return FsError(kAlreadyExists);
    case ELOOP:
      return FsError(kPathNotPermitted);
    case ENAMETOOLONG:
      return FsError(kInvalidPath);
    default:
      return FsError(kIoFailed);
  }
}

bool IsPlainFile(const struct stat& st) { return S_ISREG(st.st_mode) && st.st_nlink == 1; }

// lstat of `name` below `dir_fd`; ENOENT is reported through `exists`.
absl::Status StatNoFollow(int dir_fd, const std::string& name, struct stat* st, bool* exists) {
  if (fstatat(dir_fd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0) {
    *exists = true;
    return absl::OkStatus();
  }
  if (errno == ENOENT) {
    *exists = false;
    return absl::OkStatus();
  }
  return ErrnoError(errno);
}

// A fresh descriptor of the directory itself (its own offset, so listings never interfere).
absl::StatusOr<UniqueFd> ReopenDirectory(int dir_fd) {
  UniqueFd fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno);
  return fd;
}

// Every name in the directory except "." and "..", unfiltered.
absl::StatusOr<std::vector<std::string>> RawNames(int dir_fd, WalkBudget& budget) {
  ASSIGN_OR_RETURN(UniqueFd own, ReopenDirectory(dir_fd));
  DIR* dir = fdopendir(own.get());
  if (dir == nullptr) return ErrnoError(errno);
  own.release();  // Owned by `dir` now.
  std::vector<std::string> names;
  absl::Status status;
  errno = 0;
  while (struct dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    status = budget.Entry();
    if (!status.ok()) break;
    names.push_back(name);
    errno = 0;
  }
  if (status.ok() && errno != 0) status = ErrnoError(errno);
  closedir(dir);
  RETURN_IF_ERROR(status);
  return names;
}

absl::Status WriteAll(int fd, absl::string_view content) {
  while (!content.empty()) {
    ssize_t n = write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno);
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Opens a plain regular file `name` below `dir_fd` for reading without following, blocking
// or acquiring a terminal, and checks it is still the file lstat saw.
absl::StatusOr<UniqueFd> OpenPlainFile(int dir_fd, const std::string& name,
                                       const struct stat& seen) {
  UniqueFd fd(
      openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno);
  if (!IsPlainFile(st) || st.st_ino != seen.st_ino || st.st_dev != seen.st_dev) {
    return FsError(kPathNotPermitted);
  }
  return fd;
}

absl::StatusOr<std::string> TreeVersion(int dir_fd, size_t max_file_bytes, WalkBudget& budget,
                                        int depth);

absl::StatusOr<std::string> ChildVersion(int dir_fd, const DirEntry& entry, size_t max_file_bytes,
                                         WalkBudget& budget, int depth) {
  if (entry.type == EntryType::kDirectory) {
    ASSIGN_OR_RETURN(UniqueFd child, OpenDirectory(dir_fd, entry.name, false));
    return TreeVersion(child.get(), max_file_bytes, budget, depth + 1);
  }
  struct stat st;
  bool exists = false;
  RETURN_IF_ERROR(StatNoFollow(dir_fd, entry.name, &st, &exists));
  if (!exists) return FsError(kNotFound);
  if (!IsPlainFile(st)) return FsError(kPathNotPermitted);
  ASSIGN_OR_RETURN(UniqueFd fd, OpenPlainFile(dir_fd, entry.name, st));
  ASSIGN_OR_RETURN(std::string content, ReadAll(fd.get(), max_file_bytes));
  RETURN_IF_ERROR(budget.Bytes(content.size()));
  return ContentVersion(content);
}

absl::StatusOr<std::string> TreeVersion(int dir_fd, size_t max_file_bytes, WalkBudget& budget,
                                        int depth) {
  if (depth > kMaxDepth) return FsError(kTreeTooLarge);
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(dir_fd, budget));
  nlohmann::json listing = nlohmann::json::array();
  for (const DirEntry& entry : entries) {
    ASSIGN_OR_RETURN(std::string version,
                     ChildVersion(dir_fd, entry, max_file_bytes, budget, depth));
    listing.push_back({entry.name, entry.type == EntryType::kFile ? "file" : "directory", version});
  }
  return common::Sha256HexOfCanonicalJson(listing);
}

absl::Status RemoveTreeAt(int dir_fd, const std::string& name, WalkBudget& budget, int depth) {
  if (depth > kMaxDepth) return FsError(kTreeTooLarge);
  RETURN_IF_ERROR(budget.Entry());
  struct stat st;
  bool exists = false;
  RETURN_IF_ERROR(StatNoFollow(dir_fd, name, &st, &exists));
  if (!exists) return absl::OkStatus();
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) return ErrnoError(errno);
    return absl::OkStatus();
  }
  UniqueFd child(openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!child.valid()) return ErrnoError(errno);
  ASSIGN_OR_RETURN(std::vector<std::string> names, RawNames(child.get(), budget));
  for (const std::string& entry : names) {
    RETURN_IF_ERROR(RemoveTreeAt(child.get(), entry, budget, depth + 1));
  }
  if (unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoError(errno);
  }
  return absl::OkStatus();
}

absl::Status CopyTreeAt(int from_dir_fd, const std::string& from_name, int to_dir_fd,
                        const std::string& to_name, size_t max_file_bytes, WalkBudget& budget,
                        int depth) {
  if (depth > kMaxDepth) return FsError(kTreeTooLarge);
  RETURN_IF_ERROR(budget.Entry());
  struct stat st;
  bool exists = false;
  RETURN_IF_ERROR(StatNoFollow(from_dir_fd, from_name, &st, &exists));
  if (!exists) return FsError(kNotFound);
  if (IsPlainFile(st)) {
    ASSIGN_OR_RETURN(UniqueFd in, OpenPlainFile(from_dir_fd, from_name, st));
    ASSIGN_OR_RETURN(std::string content, ReadAll(in.get(), max_file_bytes));
    RETURN_IF_ERROR(budget.Bytes(content.size()));
    UniqueFd out(openat(to_dir_fd, to_name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode));
    if (!out.valid()) return ErrnoError(errno);
    RETURN_IF_ERROR(WriteAll(out.get(), content));
    if (fsync(out.get()) != 0) return ErrnoError(errno);
    return absl::OkStatus();
  }
  if (!S_ISDIR(st.st_mode)) return FsError(kPathNotPermitted);
  if (mkdirat(to_dir_fd, to_name.c_str(), kDirectoryMode) != 0) return ErrnoError(errno);
  ASSIGN_OR_RETURN(UniqueFd from, OpenDirectory(from_dir_fd, from_name, false));
  ASSIGN_OR_RETURN(UniqueFd to, OpenDirectory(to_dir_fd, to_name, false));
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(from.get(), budget));
  for (const DirEntry& entry : entries) {
    RETURN_IF_ERROR(CopyTreeAt(from.get(), entry.name, to.get(), entry.name, max_file_bytes, budget,
                               depth + 1));
  }
  if (fsync(to.get()) != 0) return ErrnoError(errno);
  return absl::OkStatus();
}

}  // namespace

absl::Status FsError(absl::string_view code) { return absl::FailedPreconditionError(code); }

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

absl::Status WalkBudget::CheckDeadline() const {
  if (clock_.Now() >= deadline_) return FsError(kDeadlineExceeded);
  return absl::OkStatus();
}

absl::Status WalkBudget::Entry() {
  RETURN_IF_ERROR(CheckDeadline());
  if (entries_left_ == 0) return FsError(kTreeTooLarge);
  --entries_left_;
  return absl::OkStatus();
}

absl::Status WalkBudget::Bytes(size_t n) {
  if (n > bytes_left_) return FsError(kTreeTooLarge);
  bytes_left_ -= n;
  return absl::OkStatus();
}

absl::Status CheckName(absl::string_view name) {
  if (name.size() > kMaxNameBytes || !common::validation::CheckPathSegment(name, "").ok()) {
    return FsError(kInvalidPath);
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> OpenDirectory(int dir_fd, const std::string& name, bool create) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(openat(dir_fd, name.c_str(), kFlags));
  if (fd.valid()) return fd;
  // Created only when missing: the provider's per-owner directories exist on every call after
  // the first, and a mkdirat that fails with EEXIST costs as much as the open.
  if (create && errno == ENOENT) {
    if (mkdirat(dir_fd, name.c_str(), kDirectoryMode) != 0 && errno != EEXIST) {
      return ErrnoError(errno);
    }
    fd = UniqueFd(openat(dir_fd, name.c_str(), kFlags));
    if (fd.valid()) return fd;
  }
  if (errno != ENOTDIR) return ErrnoError(errno);
  // Not a directory: a file is not_a_directory; a symlink or special file is not permitted.
  struct stat st;
  bool exists = false;
  RETURN_IF_ERROR(StatNoFollow(dir_fd, name, &st, &exists));
  if (exists && S_ISREG(st.st_mode)) return FsError(kNotADirectory);
  return FsError(kPathNotPermitted);
}

absl::StatusOr<Location> Locate(int root_parent_fd, const std::string& root_name,
                                absl::Span<const std::string> segments, bool create_parents) {
  for (const std::string& segment : segments) RETURN_IF_ERROR(CheckName(segment));
  Location location;
  if (segments.empty()) {
    location.parent = UniqueFd(fcntl(root_parent_fd, F_DUPFD_CLOEXEC, 0));
    if (!location.parent.valid()) return ErrnoError(errno);
    location.leaf = root_name;
  } else {
    ASSIGN_OR_RETURN(UniqueFd current, OpenDirectory(root_parent_fd, root_name, false));
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
      ASSIGN_OR_RETURN(current, OpenDirectory(current.get(), segments[i], create_parents));
    }
    location.parent = std::move(current);
    location.leaf = segments.back();
  }
  RETURN_IF_ERROR(
      StatNoFollow(location.parent.get(), location.leaf, &location.st, &location.exists));
  if (location.exists) {
    if (IsPlainFile(location.st)) {
      location.type = EntryType::kFile;
    } else if (S_ISDIR(location.st.st_mode)) {
      location.type = EntryType::kDirectory;
    } else {
      // Symlinks, fifos, devices, sockets, hard-linked files.
      return FsError(kPathNotPermitted);
    }
  }
  return location;
}

absl::StatusOr<UniqueFd> OpenFileForRead(const Location& location) {
  if (!location.exists) return FsError(kNotFound);
  if (location.type != EntryType::kFile) return FsError(kNotAFile);
  return OpenPlainFile(location.parent.get(), location.leaf, location.st);
}

absl::StatusOr<std::string> ReadAll(int fd, size_t max_bytes) {
  std::string content;
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno);
    }
    if (n == 0) break;
    if (content.size() + static_cast<size_t>(n) > max_bytes) return FsError(kFileTooLarge);
    content.append(buffer, static_cast<size_t>(n));
  }
  return content;
}

absl::StatusOr<std::vector<DirEntry>> ListDirectory(int dir_fd, WalkBudget& budget) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, RawNames(dir_fd, budget));
  std::vector<DirEntry> entries;
  for (std::string& name : names) {
    if (!CheckName(name).ok()) continue;
    struct stat st;
    bool exists = false;
    RETURN_IF_ERROR(StatNoFollow(dir_fd, name, &st, &exists));
    if (!exists) continue;
    if (IsPlainFile(st)) {
      entries.push_back(
          DirEntry{std::move(name), EntryType::kFile, static_cast<uint64_t>(st.st_size)});
    } else if (S_ISDIR(st.st_mode)) {
      entries.push_back(DirEntry{std::move(name), EntryType::kDirectory, 0});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

absl::StatusOr<bool> DirectoryIsEmpty(int dir_fd) {
  ASSIGN_OR_RETURN(UniqueFd own, ReopenDirectory(dir_fd));
  DIR* dir = fdopendir(own.get());
  if (dir == nullptr) return ErrnoError(errno);
  own.release();  // Owned by `dir` now.
  bool empty = true;
  errno = 0;
  while (struct dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    empty = false;
    break;
  }
  const int error = errno;
  closedir(dir);
  if (empty && error != 0) return ErrnoError(error);
  return empty;
}

std::string ContentVersion(absl::string_view content) { return common::Sha256Hex(content); }

absl::StatusOr<std::string> VersionOf(const Location& location, size_t max_file_bytes,
                                      WalkBudget& budget) {
  if (!location.exists) return FsError(kNotFound);
  DirEntry entry{location.leaf, location.type, 0};
  return ChildVersion(location.parent.get(), entry, max_file_bytes, budget, 0);
}

absl::Status WriteFileAtomically(int tmp_fd, const Location& location, absl::string_view content,
                                 WriteMode mode) {
  const std::string name = TemporaryName("w");
  UniqueFd out(openat(tmp_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      kFileMode));
  if (!out.valid()) return ErrnoError(errno);
  absl::Status status = WriteAll(out.get(), content);
  if (status.ok() && fsync(out.get()) != 0) status = ErrnoError(errno);
  if (status.ok() && close(out.release()) != 0) status = FsError(kIoFailed);
  if (status.ok()) {
    status = Rename(tmp_fd, name, location.parent.get(), location.leaf,
                    mode == WriteMode::kCreate ? RENAME_NOREPLACE : 0);
  }
  if (!status.ok()) unlinkat(tmp_fd, name.c_str(), 0);
  return status;
}

absl::Status RemoveTree(int dir_fd, const std::string& name, WalkBudget& budget) {
  return RemoveTreeAt(dir_fd, name, budget, 0);
}

absl::Status CopyTree(int from_dir_fd, const std::string& from_name, int to_dir_fd,
                      const std::string& to_name, size_t max_file_bytes, WalkBudget& budget) {
  return CopyTreeAt(from_dir_fd, from_name, to_dir_fd, to_name, max_file_bytes, budget, 0);
}

std::string TemporaryName(absl::string_view prefix) {
  return absl::StrCat(prefix, "-", common::NewUuidV4());
}

absl::Status Rename(int from_dir_fd, const std::string& from_name, int to_dir_fd,
                    const std::string& to_name, unsigned int flags) {
  if (renameat2(from_dir_fd, from_name.c_str(), to_dir_fd, to_name.c_str(), flags) != 0) {
    return ErrnoError(errno);
  }
  if (fsync(to_dir_fd) != 0) return ErrnoError(errno);
  if (from_dir_fd != to_dir_fd && fsync(from_dir_fd) != 0) return ErrnoError(errno);
  return absl::OkStatus();
}

}  // namespace sharedos::envelope::files
