// The built-in `files` tool provider (semantics §2.2): the 12 files.* tools over one workspace
// per owner, `<root>/<owner kind>/<owner id>/workspace/<path segments…>`, with snapshots and
// temporary files beside it (`…/snapshots`, `…/tmp`), never reachable through a path.
//
// It performs exactly the authorized action on exactly the authorized resource: the action
// selects the operation (list, stat, read, search, grep, create, replace, append, delete,
// snapshot:create, snapshot:list, snapshot:restore) and the resource path and owner select the
// target — the path argument is never re-read. Everything below the root goes through
// confined_fs (no symlink, special file, hard link or ".." is ever followed or opened; writes
// are atomic). Every file has a version (SHA-256 of its content; a directory's is a hash of its
// tree) returned by stat/read/writes and honoured by expectedVersion (else version_conflict).
//
// Failures are in-band: a FAILED ToolResult whose code is one of confined_fs.h's codes or
// version_conflict, snapshot_not_found, snapshot_not_covering, invalid_arguments,
// limit_exceeded, invalid_pattern, unsupported_action, unsupported_resource, quota_exceeded;
// messages are fixed phrases (no path or content). Thread-safe: writers of one owner are
// serialised.
//
// Bounded per owner (issue 34): the bytes and files an owner's area holds (workspace and
// snapshots) — a write that would pass either quota fails quota_exceeded and changes nothing —
// and what one call answers: a result past the request's max_result_bytes (grep counts the bytes
// it emits as it goes) is RESOURCE_EXHAUSTED, which the envelope refuses tool_execution_failed,
// cause result_too_large.

#ifndef SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_FILES_PROVIDER_H_
#define SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_FILES_PROVIDER_H_

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "envelope_svc/providers/files/confined_fs.h"
#include "envelope_svc/tools/tool_provider.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::files {

// In-band codes beyond confined_fs.h's.
inline constexpr absl::string_view kVersionConflict = "version_conflict";
inline constexpr absl::string_view kSnapshotNotFound = "snapshot_not_found";
inline constexpr absl::string_view kSnapshotNotCovering = "snapshot_not_covering";
inline constexpr absl::string_view kInvalidArguments = "invalid_arguments";
inline constexpr absl::string_view kLimitExceeded = "limit_exceeded";
inline constexpr absl::string_view kInvalidPattern = "invalid_pattern";
inline constexpr absl::string_view kUnsupportedAction = "unsupported_action";
inline constexpr absl::string_view kUnsupportedResource = "unsupported_resource";
inline constexpr absl::string_view kQuotaExceeded = "quota_exceeded";

class FilesProvider final : public tools::ToolProviderInterface {
 public:
  struct Options {
    // Existing directory holding every owner's area. Required.
    std::string root;
    // The resource namespace served; another one is unsupported_resource.
    std::string resource_namespace = "files";
    // Largest file read, written, searched or versioned (bytes).
    size_t max_file_bytes = 1 << 20;
    // Entries and content bytes one walk (search, grep, versions, snapshots, delete) may visit.
    size_t max_tree_entries = 10000;
    size_t max_tree_bytes = 64 << 20;
    // Entries one list answers, matches one grep answers (then `truncated`).
    size_t max_list_entries = 1000;
    size_t max_grep_matches = 500;
    // Per owner: bytes and files its workspace and snapshots hold (--files_max_owner_bytes,
    // --files_max_owner_files). 0: no quota.
    uint64_t max_owner_bytes = uint64_t{1} << 30;
    uint64_t max_owner_files = 100000;
    // Defaults of `limit` (search, snapshot list).
    int default_limit = 20;
    // What ListTools answers: the registry's files-bound definitions.
    std::vector<protocol::v1::ToolDefinition> tools;
  };

  // `clock` gives world time (completed_at, snapshot createdAt), read once per call;
  // `deadline_clock` is what Invoke's deadline is compared with, as walks proceed — real time,
  // like a gRPC provider's deadline.
  // Errors: INVALID_ARGUMENT when `options.root` is empty or not an openable directory.
  static absl::StatusOr<std::unique_ptr<FilesProvider>> Create(
      Options options, const common::Clock& clock,
      const common::Clock& deadline_clock = common::RealClock());

  ~FilesProvider() override;
  FilesProvider(const FilesProvider&) = delete;
  FilesProvider& operator=(const FilesProvider&) = delete;

  absl::string_view id() const override { return "files"; }

  // options.tools. Never fails.
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(
      const v1::ProviderContext& context, absl::Time deadline) override;

  // Performs request.action on request.resource (owner: the resource's, else the context's).
  // Always a ToolResult (SUCCEEDED with the operation's output, or FAILED in band); never an
  // error status.
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                  absl::Time deadline) override;
  // Invoke on `arguments`, request.arguments as the mediator parsed them (not parsed again).
  absl::StatusOr<protocol::v1::ToolResult> InvokeParsed(const v1::InvokeRequest& request,
                                                        const nlohmann::json& arguments,
                                                        absl::Time deadline) override;

 private:
  struct Call;

  // Invoke's body: `arguments` the parsed request.arguments, or null to parse them here.
  absl::StatusOr<protocol::v1::ToolResult> InvokeWith(const v1::InvokeRequest& request,
                                                      const nlohmann::json* arguments,
                                                      absl::Time deadline);

  FilesProvider(Options options, const common::Clock& clock, const common::Clock& deadline_clock,
                UniqueFd root);

  // The lock serialising writers of one owner area.
  absl::Mutex& OwnerLock(const std::string& owner_key) ABSL_LOCKS_EXCLUDED(locks_mu_);

  // What an owner's area holds (workspace and snapshots).
  struct Usage {
    uint64_t bytes = 0;
    uint64_t files = 0;
  };
  // The owner's usage, walked once and then kept up to date by its writers (under its lock).
  // Errors: quota_exceeded when the area is too large to walk (fail closed).
  absl::StatusOr<Usage> OwnerUsage(Call& call) ABSL_LOCKS_EXCLUDED(usage_mu_);
  // Errors: quota_exceeded when adding `bytes` and `files` to the owner's usage passes a quota.
  absl::Status CheckQuota(Call& call, int64_t bytes, int64_t files) ABSL_LOCKS_EXCLUDED(usage_mu_);
  // Adds a change the owner's area went through (after a write succeeded); Forget makes the next
  // writer walk the area again (after a change too large to account for exactly).
  void Account(const Call& call, int64_t bytes, int64_t files) ABSL_LOCKS_EXCLUDED(usage_mu_);
  void ForgetUsage(const Call& call) ABSL_LOCKS_EXCLUDED(usage_mu_);
  // The files below (or at) `target` and their bytes. Errors: those of the walk.
  static absl::StatusOr<Usage> TreeUsage(const Location& target,
                                         const std::vector<std::string>& segments,
                                         WalkBudget& budget);

  absl::StatusOr<nlohmann::json> Run(Call& call);
  absl::StatusOr<nlohmann::json> List(Call& call);
  absl::StatusOr<nlohmann::json> Stat(Call& call);
  absl::StatusOr<nlohmann::json> Read(Call& call);
  absl::StatusOr<nlohmann::json> Search(Call& call);
  absl::StatusOr<nlohmann::json> Grep(Call& call);
  absl::StatusOr<nlohmann::json> Create(Call& call);
  absl::StatusOr<nlohmann::json> Write(Call& call, bool append);
  absl::StatusOr<nlohmann::json> Delete(Call& call);
  absl::StatusOr<nlohmann::json> SnapshotCreate(Call& call);
  absl::StatusOr<nlohmann::json> SnapshotList(Call& call);
  absl::StatusOr<nlohmann::json> SnapshotRestore(Call& call);

  const Options options_;
  const common::Clock& clock_;
  const common::Clock& deadline_clock_;
  const UniqueFd root_;

  absl::Mutex locks_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<absl::Mutex>> owner_locks_
      ABSL_GUARDED_BY(locks_mu_);
  absl::Mutex usage_mu_;
  absl::flat_hash_map<std::string, Usage> usage_ ABSL_GUARDED_BY(usage_mu_);
};

// The directory name of an owner id: [A-Za-z0-9_-] and non-leading '.' kept, every other byte
// %XX-escaped; past 200 characters "~" + SHA-256 hex of the id. Never "." or "..", never
// contains '/'. Exposed for tests.
std::string EncodeOwnerId(absl::string_view id);

}  // namespace sharedos::envelope::files

#endif  // SHAREDOS_ENVELOPE_SVC_PROVIDERS_FILES_FILES_PROVIDER_H_
