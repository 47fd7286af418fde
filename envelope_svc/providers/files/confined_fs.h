// File-system primitives confined below a directory descriptor: every path is walked one
// component at a time with openat(O_NOFOLLOW), so a symlink, a special file (fifo, device,
// socket), a hard-linked file or a ".." can never be read, written or crossed, and nothing
// outside the starting directory is ever reached. Writes are atomic (a temporary file in a
// private directory, fsync, rename into place), so a crash leaves either the old or the new
// content, never a mix.
//
// Errors are absl::Status whose message is the in-band error code the files provider answers:
//   not_found, already_exists, not_a_file, not_a_directory, directory_not_empty,
//   path_not_permitted (symlink, special file, hard link, name the file system refuses),
//   invalid_path, file_too_large, tree_too_large, deadline_exceeded, io_failed.
// Functions are thread-safe; callers serialise writers (FilesProvider holds a per-owner lock).

#ifndef SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_CONFINED_FS_H_
#define SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_CONFINED_FS_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/time/clock.h"

namespace sharedos::envelope::files {

// In-band error codes (ProtocolError.code of a failed files result).
inline constexpr absl::string_view kNotFound = "not_found";
inline constexpr absl::string_view kAlreadyExists = "already_exists";
inline constexpr absl::string_view kNotAFile = "not_a_file";
inline constexpr absl::string_view kNotADirectory = "not_a_directory";
inline constexpr absl::string_view kDirectoryNotEmpty = "directory_not_empty";
inline constexpr absl::string_view kPathNotPermitted = "path_not_permitted";
inline constexpr absl::string_view kInvalidPath = "invalid_path";
inline constexpr absl::string_view kFileTooLarge = "file_too_large";
inline constexpr absl::string_view kTreeTooLarge = "tree_too_large";
inline constexpr absl::string_view kDeadlineExceeded = "deadline_exceeded";
inline constexpr absl::string_view kIoFailed = "io_failed";

// The status carrying in-band `code` (FAILED_PRECONDITION, message = code).
absl::Status FsError(absl::string_view code);

// An owned file descriptor, closed on destruction. Move-only; not thread-safe.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

// Bounds one walk over a tree: a deadline (read from `clock`), a number of entries and a
// number of content bytes. Not thread-safe (one per operation).
class WalkBudget {
 public:
  WalkBudget(const common::Clock& clock, absl::Time deadline, size_t max_entries, size_t max_bytes)
      : clock_(clock), deadline_(deadline), entries_left_(max_entries), bytes_left_(max_bytes) {}

  // Counts one entry. Errors: deadline_exceeded, tree_too_large.
  absl::Status Entry();
  // Counts content bytes. Errors: tree_too_large.
  absl::Status Bytes(size_t n);
  // Errors: deadline_exceeded.
  absl::Status CheckDeadline() const;

 private:
  const common::Clock& clock_;
  absl::Time deadline_;
  size_t entries_left_;
  size_t bytes_left_;
};

enum class EntryType { kFile, kDirectory };

// A child of a directory that a path may name: a regular, singly linked file or a directory,
// whose name is a valid path segment. Everything else is invisible to listings and walks.
struct DirEntry {
  std::string name;
  EntryType type;
  // Bytes, for files.
  uint64_t size = 0;
};

// A path resolved below a root: the directory holding its last component and that name.
// The root itself is (the root's parent, the root's name).
struct Location {
  UniqueFd parent;
  std::string leaf;
  // Whether the leaf exists (as a file or a directory; anything else is path_not_permitted).
  bool exists = false;
  EntryType type = EntryType::kFile;
  struct stat st = {};
};

// Checks one name of a path: a path segment (protocol rules) the file system can hold
// (≤ 255 bytes). Errors: invalid_path.
absl::Status CheckName(absl::string_view name);

// Opens the directory `name` below `dir_fd`, creating it (0700) when `create` and missing.
// Errors: not_found, not_a_directory, path_not_permitted, io_failed.
absl::StatusOr<UniqueFd> OpenDirectory(int dir_fd, const std::string& name, bool create);

// Walks `segments` below the directory (`root_parent_fd`, `root_name`). Every component but
// the last must be a directory; the last may be absent (exists = false). With
// `create_parents`, missing intermediate directories are created.
// Errors: invalid_path (a bad segment), not_found (a missing intermediate), not_a_directory,
// path_not_permitted, io_failed.
absl::StatusOr<Location> Locate(int root_parent_fd, const std::string& root_name,
                                absl::Span<const std::string> segments, bool create_parents);

// Opens an existing regular file of `location` for reading.
// Errors: not_found, not_a_file, path_not_permitted, io_failed.
absl::StatusOr<UniqueFd> OpenFileForRead(const Location& location);

// Reads all of `fd`. Errors: file_too_large beyond `max_bytes`, io_failed.
absl::StatusOr<std::string> ReadAll(int fd, size_t max_bytes);

// The directory's children (see DirEntry), sorted by name.
// Errors: io_failed; deadline_exceeded / tree_too_large from `budget`.
absl::StatusOr<std::vector<DirEntry>> ListDirectory(int dir_fd, WalkBudget& budget);

// Whether the directory has no entries at all (symlinks and special files count).
// Errors: io_failed.
absl::StatusOr<bool> DirectoryIsEmpty(int dir_fd);

// The content version of a file: lowercase hex SHA-256 of its bytes.
std::string ContentVersion(absl::string_view content);

// The version of `location` (which exists): ContentVersion for a file; for a directory, the
// SHA-256 of the canonical JSON [[name, "file"|"directory", version], …] of its children,
// recursively. Errors: file_too_large (a file over `max_file_bytes`), io_failed, and the
// budget's.
absl::StatusOr<std::string> VersionOf(const Location& location, size_t max_file_bytes,
                                      WalkBudget& budget);

enum class WriteMode {
  // Fails already_exists when the leaf exists.
  kCreate,
  // Replaces the leaf, which must be a file.
  kReplace,
};

// Writes `content` to `location` atomically: a temporary file in `tmp_fd` (same file system),
// fsync, renameat2 into place (RENAME_NOREPLACE for kCreate), fsync of the directory.
// Errors: already_exists, io_failed.
absl::Status WriteFileAtomically(int tmp_fd, const Location& location, absl::string_view content,
                                 WriteMode mode);

// Removes `name` below `dir_fd` and, for a directory, everything under it, never following a
// symlink (symlinks and special files inside are unlinked, not followed).
// Errors: io_failed and the budget's.
absl::Status RemoveTree(int dir_fd, const std::string& name, WalkBudget& budget);

// Copies the file or directory (`from_dir_fd`, `from_name`) to the new name (`to_dir_fd`,
// `to_name`), regular files and directories only (what a DirEntry may be); the copy's files are
// fsynced. Errors: already_exists, file_too_large, io_failed, and the budget's.
absl::Status CopyTree(int from_dir_fd, const std::string& from_name, int to_dir_fd,
                      const std::string& to_name, size_t max_file_bytes, WalkBudget& budget);

// A fresh random name for a private temporary entry ("<prefix>-<hex>").
std::string TemporaryName(absl::string_view prefix);

// renameat2 of (from_dir_fd, from_name) onto (to_dir_fd, to_name), with `flags`
// (RENAME_NOREPLACE, RENAME_EXCHANGE or 0), then fsync of both directories.
// Errors: already_exists (EEXIST), not_found (ENOENT), io_failed.
absl::Status Rename(int from_dir_fd, const std::string& from_name, int to_dir_fd,
                    const std::string& to_name, unsigned int flags);

}  // namespace sharedos::envelope::files

#endif  // SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_CONFINED_FS_H_
