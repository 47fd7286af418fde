#include "envelope_svc/providers/files/files_provider.h"

#include <fcntl.h>
#include <re2/re2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "capability/address.h"
#include "common/crypto/base64url.h"
#include "common/crypto/random.h"
#include "common/crypto/sha256.h"
#include "common/json/proto_json.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/time/rfc3339.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"

namespace sharedos::envelope::files {

using ::sharedos::protocol::v1::ToolResult;
using Json = nlohmann::json;
using Segments = std::vector<std::string>;

namespace {

constexpr char kWorkspaceDir[] = "workspace";
constexpr char kSnapshotsDir[] = "snapshots";
constexpr char kTmpDir[] = "tmp";
constexpr char kTreeDir[] = "tree";
constexpr char kManifestFile[] = "manifest.json";
constexpr size_t kMaxManifestBytes = 64 * 1024;
constexpr size_t kMaxLabelLength = 256;
constexpr size_t kMaxOwnerDirLength = 200;

struct CodeInfo {
  absl::string_view code;
  absl::string_view message;
  bool retryable;
};

constexpr CodeInfo kCodes[] = {
    {kNotFound, "No file or directory exists at the requested path.", false},
    {kAlreadyExists, "A file or directory already exists at the requested path.", false},
    {kNotAFile, "The requested path is a directory, not a file.", false},
    {kNotADirectory, "A component of the requested path is a file, not a directory.", false},
    {kDirectoryNotEmpty, "The directory is not empty; delete it with recursive set.", false},
    {kPathNotPermitted,
     "The requested path crosses or names an entry the files provider never follows (a "
     "symbolic link, a special file or a hard-linked file).",
     false},
    {kInvalidPath, "The requested path is not usable for this operation.", false},
    {kFileTooLarge, "The file is larger than the files provider handles.", false},
    {kTreeTooLarge, "The directory tree is larger than one operation may visit.", false},
    {kDeadlineExceeded, "The operation ran out of time.", true},
    {kIoFailed, "The file system failed the operation.", true},
    {kVersionConflict, "The current version differs from expectedVersion.", false},
    {kSnapshotNotFound, "No snapshot with that id exists for this owner.", false},
    {kSnapshotNotCovering, "The snapshot does not contain the requested path.", false},
    {kInvalidArguments, "The arguments are missing or malformed for this operation.", false},
    {kLimitExceeded, "An argument exceeds its contract limit.", false},
    {kInvalidPattern, "The pattern is not a valid regular expression.", false},
    {kUnsupportedAction, "The files provider does not perform the authorized action.", false},
    {kUnsupportedResource, "The files provider does not serve the authorized resource.", false},
    {kQuotaExceeded,
     "The owner's files quota (bytes or files, --files_max_owner_bytes and "
     "--files_max_owner_files) would be exceeded; nothing was changed.",
     false},
};

const CodeInfo& InfoOf(absl::string_view code) {
  for (const CodeInfo& info : kCodes) {
    if (info.code == code) return info;
  }
  // A status this provider did not make.
  for (const CodeInfo& info : kCodes) {
    if (info.code == kIoFailed) return info;
  }
  return kCodes[0];
}

absl::Status Fail(absl::string_view code) { return FsError(code); }

// The call's result would pass its max_result_bytes (not in band: the envelope refuses it).
absl::Status ResultTooLarge() {
  return absl::ResourceExhaustedError("files provider: result over the call's max_result_bytes");
}

// What one grep match costs in the answer: its path, text and context lines, with the JSON
// around them (keys, quotes, the line number) as a fixed allowance per string.
constexpr uint64_t kPerStringOverhead = 16;

std::string JoinPath(const Segments& segments) { return absl::StrJoin(segments, "/"); }

bool IsPrefix(const Segments& prefix, const Segments& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

// ---- arguments ----

absl::StatusOr<std::optional<std::string>> OptionalString(const Json& args, absl::string_view key) {
  auto it = args.find(std::string(key));
  if (it == args.end()) return std::nullopt;
  if (!it->is_string()) return Fail(kInvalidArguments);
  return it->get<std::string>();
}

absl::StatusOr<std::string> RequiredString(const Json& args, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(args, key));
  if (!value.has_value()) return Fail(kInvalidArguments);
  return *std::move(value);
}

absl::StatusOr<std::optional<bool>> OptionalBool(const Json& args, absl::string_view key) {
  auto it = args.find(std::string(key));
  if (it == args.end()) return std::nullopt;
  if (!it->is_boolean()) return Fail(kInvalidArguments);
  return it->get<bool>();
}

// An integer in [min, max]; outside is limit_exceeded, a non-integer invalid_arguments.
absl::StatusOr<int64_t> IntegerOr(const Json& args, absl::string_view key, int64_t fallback,
                                  int64_t min, int64_t max) {
  auto it = args.find(std::string(key));
  if (it == args.end()) return fallback;
  int64_t value = 0;
  if (it->is_number_integer()) {
    value = it->get<int64_t>();
  } else if (it->is_number_float()) {
    double d = it->get<double>();
    if (d < -9e15 || d > 9e15) return Fail(kLimitExceeded);
    if (d != static_cast<double>(static_cast<int64_t>(d))) return Fail(kInvalidArguments);
    value = static_cast<int64_t>(d);
  } else {
    return Fail(kInvalidArguments);
  }
  if (value < min || value > max) return Fail(kLimitExceeded);
  return value;
}

// 1..max UTF-16 units of valid UTF-8.
absl::Status CheckText(const std::string& text, size_t max_length) {
  std::optional<size_t> length = common::validation::Utf16Length(text);
  if (!length.has_value() || *length == 0) return Fail(kInvalidArguments);
  if (*length > max_length) return Fail(kLimitExceeded);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ExpectedVersion(const Json& args) {
  return OptionalString(args, "expectedVersion");
}

absl::Status CheckExpected(const std::optional<std::string>& expected,
                           const std::optional<std::string>& current) {
  if (expected.has_value() && (!current.has_value() || *expected != *current)) {
    return Fail(kVersionConflict);
  }
  return absl::OkStatus();
}

bool IsUtf8(absl::string_view text) { return common::validation::Utf16Length(text).has_value(); }

// Text a search or grep may look into: valid UTF-8 without NUL.
bool IsSearchableText(absl::string_view text) {
  return text.find('\0') == absl::string_view::npos && IsUtf8(text);
}

absl::StatusOr<std::string> ReadLocatedFile(const Location& location, size_t max_bytes) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFileForRead(location));
  return ReadAll(fd.get(), max_bytes);
}

// ---- snapshots ----

bool IsSnapshotId(absl::string_view id) {
  // snap-<20 digits>-<32 hex>
  if (id.size() != 5 + 20 + 1 + 32 || !absl::StartsWith(id, "snap-") || id[25] != '-') {
    return false;
  }
  for (size_t i = 5; i < 25; ++i) {
    if (!absl::ascii_isdigit(id[i])) return false;
  }
  for (size_t i = 26; i < id.size(); ++i) {
    if (!absl::ascii_isdigit(id[i]) && !(id[i] >= 'a' && id[i] <= 'f')) return false;
  }
  return true;
}

absl::StatusOr<std::string> NewSnapshotId(absl::Time now) {
  int64_t nanos = std::max<int64_t>(0, absl::ToUnixNanos(now));
  absl::StatusOr<std::string> random = common::SecureRandomBytes(16);
  if (!random.ok()) return Fail(kIoFailed);
  std::string hex;
  for (unsigned char c : *random) absl::StrAppendFormat(&hex, "%02x", c);
  return absl::StrFormat("snap-%020d-%s", nanos, hex);
}

struct Manifest {
  std::string id;
  Segments path;
  std::optional<std::string> label;
  std::string created_at;
  std::string version;
};

Json ManifestToJson(const Manifest& manifest) {
  Json json = {{"snapshotId", manifest.id},
               {"path", manifest.path},
               {"createdAt", manifest.created_at},
               {"version", manifest.version}};
  if (manifest.label.has_value()) json["label"] = *manifest.label;
  return json;
}

// The manifest of snapshot `id`. Errors: snapshot_not_found for anything unreadable.
absl::StatusOr<Manifest> ReadManifest(int snapshots_fd, const std::string& id) {
  if (!IsSnapshotId(id)) return Fail(kSnapshotNotFound);
  absl::StatusOr<Location> location = Locate(snapshots_fd, id, {kManifestFile}, false);
  if (!location.ok()) return Fail(kSnapshotNotFound);
  absl::StatusOr<std::string> text = ReadLocatedFile(*location, kMaxManifestBytes);
  if (!text.ok()) return Fail(kSnapshotNotFound);
  Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return Fail(kSnapshotNotFound);
  Manifest manifest;
  auto id_it = json.find("snapshotId");
  auto path_it = json.find("path");
  auto created_it = json.find("createdAt");
  auto version_it = json.find("version");
  if (id_it == json.end() || !id_it->is_string() || *id_it != id || path_it == json.end() ||
      !path_it->is_array() || created_it == json.end() || !created_it->is_string() ||
      version_it == json.end() || !version_it->is_string()) {
    return Fail(kSnapshotNotFound);
  }
  manifest.id = id;
  for (const Json& segment : *path_it) {
    if (!segment.is_string()) return Fail(kSnapshotNotFound);
    manifest.path.push_back(segment.get<std::string>());
  }
  manifest.created_at = created_it->get<std::string>();
  manifest.version = version_it->get<std::string>();
  auto label_it = json.find("label");
  if (label_it != json.end() && label_it->is_string())
    manifest.label = label_it->get<std::string>();
  return manifest;
}

}  // namespace

std::string EncodeOwnerId(absl::string_view id) {
  std::string out;
  for (unsigned char c : id) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || (c == '.' && !out.empty())) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  if (out.empty() || out.size() > kMaxOwnerDirLength)
    return absl::StrCat("~", common::Sha256Hex(id));
  return out;
}

namespace {

// The actions that neither write nor touch snapshots (their calls open no tmp/ or snapshots/).
bool IsReadOnlyAction(absl::string_view action) {
  return action == "list" || action == "stat" || action == "read" || action == "search" ||
         action == "grep";
}

}  // namespace

// One invocation: the owner's area (opened), the target path, the arguments, the budget.
struct FilesProvider::Call {
  absl::Time now;
  std::string action;
  Segments segments;
  // The call's arguments: the mediator's parsed value (borrowed), or `parsed` here.
  const Json* args_ptr = nullptr;
  Json parsed;
  const Json& args() const { return *args_ptr; }
  std::string owner_key;
  UniqueFd owner;
  UniqueFd snapshots;
  UniqueFd tmp;
  std::optional<WalkBudget> budget;
  // The request's max_result_bytes (0: none).
  uint64_t max_result_bytes = 0;

  WalkBudget& walk() { return *budget; }
  absl::StatusOr<Location> Target(bool create_parents) const {
    return Locate(owner.get(), kWorkspaceDir, segments, create_parents);
  }
};

absl::StatusOr<std::unique_ptr<FilesProvider>> FilesProvider::Create(
    Options options, const common::Clock& clock, const common::Clock& deadline_clock) {
  if (options.root.empty()) return absl::InvalidArgumentError("files provider: root: empty");
  UniqueFd root(open(options.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("files provider: root: not an openable directory: ", options.root));
  }
  return std::unique_ptr<FilesProvider>(
      new FilesProvider(std::move(options), clock, deadline_clock, std::move(root)));
}

FilesProvider::FilesProvider(Options options, const common::Clock& clock,
                             const common::Clock& deadline_clock, UniqueFd root)
    : options_(std::move(options)),
      clock_(clock),
      deadline_clock_(deadline_clock),
      root_(std::move(root)) {}

FilesProvider::~FilesProvider() = default;

absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> FilesProvider::ListTools(
    const v1::ProviderContext& context, absl::Time deadline) {
  return options_.tools;
}

absl::Mutex& FilesProvider::OwnerLock(const std::string& owner_key) {
  absl::MutexLock lock(&locks_mu_);
  std::unique_ptr<absl::Mutex>& mu = owner_locks_[owner_key];
  if (mu == nullptr) mu = std::make_unique<absl::Mutex>();
  return *mu;
}

absl::StatusOr<ToolResult> FilesProvider::Invoke(const v1::InvokeRequest& request,
                                                 absl::Time deadline) {
  return InvokeWith(request, nullptr, deadline);
}

absl::StatusOr<ToolResult> FilesProvider::InvokeParsed(const v1::InvokeRequest& request,
                                                       const Json& arguments, absl::Time deadline) {
  return InvokeWith(request, &arguments, deadline);
}

absl::StatusOr<ToolResult> FilesProvider::InvokeWith(const v1::InvokeRequest& request,
                                                     const Json* arguments, absl::Time deadline) {
  Call call;
  call.action = request.action();
  // The world clock is read once per call: with an auto-stepping clock (the conformance world)
  // a provider call must not move time more than any other operation does.
  call.now = clock_.Now();
  call.budget.emplace(deadline_clock_, deadline, options_.max_tree_entries,
                      options_.max_tree_bytes);
  call.max_result_bytes = request.max_result_bytes();
  absl::StatusOr<Json> output = [&]() -> absl::StatusOr<Json> {
    RETURN_IF_ERROR(call.walk().CheckDeadline());
    if (request.resource().namespace_() != options_.resource_namespace) {
      return Fail(kUnsupportedResource);
    }
    const protocol::v1::Address& owner =
        request.resource().has_owner() ? request.resource().owner() : request.context().owner();
    const absl::string_view kind = capability::AddressKind(owner);
    if (kind.empty() || capability::AddressId(owner).empty()) {
      return Fail(kUnsupportedResource);
    }
    call.segments.assign(request.resource().path().begin(), request.resource().path().end());
    if (arguments == nullptr) {
      absl::StatusOr<Json> args = common::ProtoStructToJson(request.arguments());
      if (!args.ok()) return Fail(kInvalidArguments);
      call.parsed = *std::move(args);
      arguments = &call.parsed;
    }
    call.args_ptr = arguments;
    const std::string owner_dir = EncodeOwnerId(capability::AddressId(owner));
    call.owner_key = absl::StrCat(kind, "/", owner_dir);
    ASSIGN_OR_RETURN(UniqueFd kind_fd, OpenDirectory(root_.get(), std::string(kind), true));
    ASSIGN_OR_RETURN(call.owner, OpenDirectory(kind_fd.get(), owner_dir, true));
    ASSIGN_OR_RETURN(UniqueFd workspace, OpenDirectory(call.owner.get(), kWorkspaceDir, true));
    if (!IsReadOnlyAction(call.action)) {
      // Writes stage in tmp/ and snapshots live in snapshots/; reads need neither.
      ASSIGN_OR_RETURN(call.snapshots, OpenDirectory(call.owner.get(), kSnapshotsDir, true));
      ASSIGN_OR_RETURN(call.tmp, OpenDirectory(call.owner.get(), kTmpDir, true));
    }
    return Run(call);
  }();

  // A result past the call's cap is not an answer: the envelope refuses it (result_too_large).
  if (!output.ok() && output.status().code() == absl::StatusCode::kResourceExhausted) {
    return output.status();
  }
  ToolResult result;
  result.set_call_id(request.call_id());
  result.set_tool(request.tool());
  if (output.ok()) {
    absl::StatusOr<google::protobuf::Value> value = common::JsonToProtoValue(*output);
    if (value.ok()) {
      result.set_status(protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED);
      *result.mutable_output() = *std::move(value);
    } else {
      output = Fail(kIoFailed);
    }
  }
  if (!output.ok()) {
    const CodeInfo& info = InfoOf(output.status().message());
    result.set_status(protocol::v1::TOOL_RESULT_STATUS_FAILED);
    result.mutable_error()->set_code(std::string(info.code));
    result.mutable_error()->set_message(std::string(info.message));
    result.mutable_error()->set_retryable(info.retryable);
  }
  absl::StatusOr<google::protobuf::Timestamp> now = common::ToProtoTimestamp(call.now);
  if (now.ok()) *result.mutable_completed_at() = *now;
  return result;
}

absl::StatusOr<Json> FilesProvider::Run(Call& call) {
  const std::string& action = call.action;
  if (action == "list") return List(call);
  if (action == "stat") return Stat(call);
  if (action == "read") return Read(call);
  if (action == "search") return Search(call);
  if (action == "grep") return Grep(call);
  if (action == "create" || action == "replace" || action == "append" || action == "delete" ||
      action == "snapshot:create" || action == "snapshot:restore") {
    absl::MutexLock lock(&OwnerLock(call.owner_key));
    if (action == "create") return Create(call);
    if (action == "replace") return Write(call, /*append=*/false);
    if (action == "append") return Write(call, /*append=*/true);
    if (action == "delete") return Delete(call);
    if (action == "snapshot:create") return SnapshotCreate(call);
    return SnapshotRestore(call);
  }
  if (action == "snapshot:list") return SnapshotList(call);
  return Fail(kUnsupportedAction);
}

absl::StatusOr<Json> FilesProvider::List(Call& call) {
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  if (!target.exists) return Fail(kNotFound);
  if (target.type != EntryType::kDirectory) return Fail(kNotADirectory);
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDirectory(target.parent.get(), target.leaf, false));
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(dir.get(), call.walk()));
  Json listed = Json::array();
  for (const DirEntry& entry : entries) {
    if (listed.size() == options_.max_list_entries) break;
    Json item = {{"name", entry.name},
                 {"type", entry.type == EntryType::kFile ? "file" : "directory"}};
    if (entry.type == EntryType::kFile) item["size"] = entry.size;
    listed.push_back(std::move(item));
  }
  return Json{{"path", JoinPath(call.segments)},
              {"entries", std::move(listed)},
              {"truncated", entries.size() > options_.max_list_entries}};
}

absl::StatusOr<Json> FilesProvider::Stat(Call& call) {
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  if (!target.exists) return Fail(kNotFound);
  ASSIGN_OR_RETURN(std::string version, VersionOf(target, options_.max_file_bytes, call.walk()));
  Json out = {{"path", JoinPath(call.segments)}, {"version", version}};
  if (target.type == EntryType::kFile) {
    out["type"] = "file";
    out["size"] = static_cast<uint64_t>(target.st.st_size);
  } else {
    out["type"] = "directory";
    ASSIGN_OR_RETURN(UniqueFd dir, OpenDirectory(target.parent.get(), target.leaf, false));
    ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(dir.get(), call.walk()));
    out["entries"] = entries.size();
  }
  return out;
}

absl::StatusOr<Json> FilesProvider::Read(Call& call) {
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  ASSIGN_OR_RETURN(std::string content, ReadLocatedFile(target, options_.max_file_bytes));
  const bool text = IsUtf8(content);
  // base64url grows the content by a third.
  const uint64_t answered = text ? content.size() : (content.size() + 2) / 3 * 4;
  if (call.max_result_bytes > 0 && answered > call.max_result_bytes) return ResultTooLarge();
  return Json{{"path", JoinPath(call.segments)},
              {"content", text ? content : common::Base64UrlEncode(content)},
              {"encoding", text ? "utf-8" : "base64url"},
              {"size", content.size()},
              {"version", ContentVersion(content)}};
}

namespace {

// Visits files and directories below a target in name order (depth first), never following
// anything confined_fs would not. `visit(path, type, dir_fd, name)` returns false to stop.
template <typename Visit>
absl::Status WalkTree(int dir_fd, Segments& path, WalkBudget& budget, int depth, Visit& visit,
                      bool& stopped) {
  if (depth > 64) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(dir_fd, budget));
  for (const DirEntry& entry : entries) {
    if (stopped) return absl::OkStatus();
    path.push_back(entry.name);
    absl::StatusOr<bool> more = visit(path, entry, dir_fd);
    if (!more.ok()) return more.status();
    if (!*more) {
      stopped = true;
    } else if (entry.type == EntryType::kDirectory) {
      ASSIGN_OR_RETURN(UniqueFd child, OpenDirectory(dir_fd, entry.name, false));
      RETURN_IF_ERROR(WalkTree(child.get(), path, budget, depth + 1, visit, stopped));
    }
    path.pop_back();
  }
  return absl::OkStatus();
}

// Runs `visit` on the target itself (when a file) or on everything below it (a directory).
template <typename Visit>
absl::Status WalkTarget(const Location& target, const Segments& segments, WalkBudget& budget,
                        Visit visit) {
  if (!target.exists) return Fail(kNotFound);
  Segments path = segments;
  if (target.type == EntryType::kFile) {
    DirEntry self{target.leaf, EntryType::kFile, static_cast<uint64_t>(target.st.st_size)};
    return visit(path, self, target.parent.get()).status();
  }
  ASSIGN_OR_RETURN(UniqueFd dir, OpenDirectory(target.parent.get(), target.leaf, false));
  bool stopped = false;
  return WalkTree(dir.get(), path, budget, 0, visit, stopped);
}

// The files below (or at) a target and their bytes, without reading them.
struct TreeCount {
  uint64_t bytes = 0;
  uint64_t files = 0;
};
absl::StatusOr<TreeCount> CountTree(const Location& target, const Segments& segments,
                                    WalkBudget& budget) {
  TreeCount count;
  if (!target.exists) return count;
  RETURN_IF_ERROR(
      WalkTarget(target, segments, budget,
                 [&](const Segments&, const DirEntry& entry, int) -> absl::StatusOr<bool> {
                   if (entry.type == EntryType::kFile) {
                     count.bytes += entry.size;
                     ++count.files;
                   }
                   return true;
                 }));
  return count;
}

// The content of a plain file `name` below `dir_fd` when it is searchable text within
// `max_bytes`; nullopt otherwise (too large, binary, changed under us).
absl::StatusOr<std::optional<std::string>> SearchableContent(int dir_fd, const DirEntry& entry,
                                                             size_t max_bytes, WalkBudget& budget) {
  if (entry.type != EntryType::kFile || entry.size > max_bytes) return std::nullopt;
  Location file;
  file.parent = UniqueFd(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!file.parent.valid()) return Fail(kIoFailed);
  file.leaf = entry.name;
  if (fstatat(dir_fd, entry.name.c_str(), &file.st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  file.exists = true;
  file.type = EntryType::kFile;
  absl::StatusOr<std::string> content = ReadLocatedFile(file, max_bytes);
  if (!content.ok()) {
    if (content.status().message() == kIoFailed) return content.status();
    return std::nullopt;
  }
  RETURN_IF_ERROR(budget.Bytes(content->size()));
  if (!IsSearchableText(*content)) return std::nullopt;
  return *std::move(content);
}

}  // namespace

absl::StatusOr<Json> FilesProvider::Search(Call& call) {
  ASSIGN_OR_RETURN(std::string query, RequiredString(call.args(), "query"));
  RETURN_IF_ERROR(CheckText(query, common::validation::kMaxSearchQueryLength));
  ASSIGN_OR_RETURN(int64_t limit,
                   IntegerOr(call.args(), "limit", options_.default_limit, 1,
                             static_cast<int64_t>(common::validation::kMaxSearchResults)));
  const std::string needle = absl::AsciiStrToLower(query);
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  Json results = Json::array();
  bool truncated = false;
  auto visit = [&](const Segments& path, const DirEntry& entry,
                   int dir_fd) -> absl::StatusOr<bool> {
    absl::string_view match;
    if (absl::StrContains(absl::AsciiStrToLower(entry.name), needle)) {
      match = "name";
    } else {
      ASSIGN_OR_RETURN(std::optional<std::string> content,
                       SearchableContent(dir_fd, entry, options_.max_file_bytes, call.walk()));
      if (content.has_value() && absl::StrContains(absl::AsciiStrToLower(*content), needle)) {
        match = "content";
      }
    }
    if (match.empty()) return true;
    if (results.size() == static_cast<size_t>(limit)) {
      truncated = true;
      return false;
    }
    results.push_back({{"path", JoinPath(path)},
                       {"type", entry.type == EntryType::kFile ? "file" : "directory"},
                       {"match", match}});
    return true;
  };
  RETURN_IF_ERROR(WalkTarget(target, call.segments, call.walk(), visit));
  return Json{{"results", std::move(results)}, {"truncated", truncated}};
}

absl::StatusOr<Json> FilesProvider::Grep(Call& call) {
  ASSIGN_OR_RETURN(std::string pattern, RequiredString(call.args(), "pattern"));
  RETURN_IF_ERROR(CheckText(pattern, common::validation::kMaxSearchQueryLength));
  ASSIGN_OR_RETURN(std::optional<std::string> mode, OptionalString(call.args(), "mode"));
  if (mode.has_value() && *mode != "regex" && *mode != "literal") return Fail(kInvalidArguments);
  ASSIGN_OR_RETURN(std::optional<bool> case_sensitive, OptionalBool(call.args(), "caseSensitive"));
  const int64_t max_context = static_cast<int64_t>(common::validation::kMaxGrepContextLines);
  ASSIGN_OR_RETURN(int64_t before, IntegerOr(call.args(), "contextBefore", 0, 0, max_context));
  ASSIGN_OR_RETURN(int64_t after, IntegerOr(call.args(), "contextAfter", 0, 0, max_context));

  RE2::Options re_options;
  re_options.set_log_errors(false);
  re_options.set_literal(mode.has_value() && *mode == "literal");
  re_options.set_case_sensitive(case_sensitive.value_or(true));
  RE2 re(pattern, re_options);
  if (!re.ok()) return Fail(kInvalidPattern);

  ASSIGN_OR_RETURN(Location target, call.Target(false));
  Json matches = Json::array();
  bool truncated = false;
  // Bytes this answer emits so far, checked before each match is built (bytes emitted, not only
  // bytes read: context lines repeat the same lines in many matches).
  uint64_t emitted = 0;
  auto visit = [&](const Segments& path, const DirEntry& entry,
                   int dir_fd) -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(std::optional<std::string> content,
                     SearchableContent(dir_fd, entry, options_.max_file_bytes, call.walk()));
    if (!content.has_value()) return true;
    std::vector<absl::string_view> lines = absl::StrSplit(*content, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    const std::string joined_path = JoinPath(path);
    // This file's matches and what they would emit, counted before any of them is built: an
    // answer past the cap is refused without building it.
    std::vector<size_t> matched;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!RE2::PartialMatch(re2::StringPiece(lines[i].data(), lines[i].size()), re)) continue;
      if (matches.size() + matched.size() == options_.max_grep_matches) {
        truncated = true;
        break;
      }
      const size_t first = i >= static_cast<size_t>(before) ? i - before : 0;
      const size_t last = std::min(lines.size() - 1, i + static_cast<size_t>(after));
      emitted += joined_path.size() + 2 * kPerStringOverhead;
      for (size_t j = first; j <= last; ++j) emitted += lines[j].size() + kPerStringOverhead;
      if (call.max_result_bytes > 0 && emitted > call.max_result_bytes) return ResultTooLarge();
      matched.push_back(i);
    }
    for (const size_t i : matched) {
      Json match = {{"path", joined_path}, {"line", i + 1}, {"text", lines[i]}};
      if (before > 0) {
        Json context = Json::array();
        for (size_t j = i >= static_cast<size_t>(before) ? i - before : 0; j < i; ++j) {
          context.push_back(lines[j]);
        }
        match["before"] = std::move(context);
      }
      if (after > 0) {
        Json context = Json::array();
        for (size_t j = i + 1; j < lines.size() && j <= i + static_cast<size_t>(after); ++j) {
          context.push_back(lines[j]);
        }
        match["after"] = std::move(context);
      }
      matches.push_back(std::move(match));
    }
    return !truncated;
  };
  RETURN_IF_ERROR(WalkTarget(target, call.segments, call.walk(), visit));
  return Json{{"matches", std::move(matches)}, {"truncated", truncated}};
}

absl::StatusOr<Json> FilesProvider::Create(Call& call) {
  ASSIGN_OR_RETURN(std::string content, RequiredString(call.args(), "content"));
  if (content.size() > options_.max_file_bytes) return Fail(kFileTooLarge);
  if (call.segments.empty()) return Fail(kInvalidPath);
  RETURN_IF_ERROR(CheckQuota(call, static_cast<int64_t>(content.size()), 1));
  ASSIGN_OR_RETURN(Location target, call.Target(/*create_parents=*/true));
  if (target.exists) return Fail(kAlreadyExists);
  RETURN_IF_ERROR(WriteFileAtomically(call.tmp.get(), target, content, WriteMode::kCreate));
  Account(call, static_cast<int64_t>(content.size()), 1);
  return Json{{"path", JoinPath(call.segments)},
              {"version", ContentVersion(content)},
              {"size", content.size()}};
}

absl::StatusOr<Json> FilesProvider::Write(Call& call, bool append) {
  ASSIGN_OR_RETURN(std::string content, RequiredString(call.args(), "content"));
  ASSIGN_OR_RETURN(std::optional<std::string> expected, ExpectedVersion(call.args()));
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  ASSIGN_OR_RETURN(std::string current, ReadLocatedFile(target, options_.max_file_bytes));
  const std::string previous_version = ContentVersion(current);
  RETURN_IF_ERROR(CheckExpected(expected, previous_version));
  std::string next = append ? absl::StrCat(current, content) : std::move(content);
  if (next.size() > options_.max_file_bytes) return Fail(kFileTooLarge);
  const int64_t grown = static_cast<int64_t>(next.size()) - static_cast<int64_t>(current.size());
  RETURN_IF_ERROR(CheckQuota(call, grown, 0));
  RETURN_IF_ERROR(WriteFileAtomically(call.tmp.get(), target, next, WriteMode::kReplace));
  Account(call, grown, 0);
  return Json{{"path", JoinPath(call.segments)},
              {"version", ContentVersion(next)},
              {"previousVersion", previous_version},
              {"size", next.size()}};
}

absl::StatusOr<Json> FilesProvider::Delete(Call& call) {
  ASSIGN_OR_RETURN(std::optional<std::string> expected, ExpectedVersion(call.args()));
  ASSIGN_OR_RETURN(std::optional<bool> recursive, OptionalBool(call.args(), "recursive"));
  if (call.segments.empty()) return Fail(kInvalidPath);
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  if (!target.exists) return Fail(kNotFound);
  if (target.type == EntryType::kDirectory && !recursive.value_or(false)) {
    ASSIGN_OR_RETURN(UniqueFd dir, OpenDirectory(target.parent.get(), target.leaf, false));
    ASSIGN_OR_RETURN(bool empty, DirectoryIsEmpty(dir.get()));
    if (!empty) return Fail(kDirectoryNotEmpty);
  }
  if (expected.has_value()) {
    ASSIGN_OR_RETURN(std::string version, VersionOf(target, options_.max_file_bytes, call.walk()));
    RETURN_IF_ERROR(CheckExpected(expected, version));
  }
  if (target.type == EntryType::kFile) {
    if (unlinkat(target.parent.get(), target.leaf.c_str(), 0) != 0) return Fail(kIoFailed);
    Account(call, -static_cast<int64_t>(target.st.st_size), -1);
    if (fsync(target.parent.get()) != 0) return Fail(kIoFailed);
  } else {
    ForgetUsage(call);
    // Out of the workspace in one rename, then removed at leisure.
    const std::string trash = TemporaryName("d");
    RETURN_IF_ERROR(
        Rename(target.parent.get(), target.leaf, call.tmp.get(), trash, RENAME_NOREPLACE));
    // The delete has happened; a removal cut short leaves only unreachable debris in tmp/.
    WalkBudget cleanup(deadline_clock_, absl::InfiniteFuture(), SIZE_MAX, SIZE_MAX);
    RemoveTree(call.tmp.get(), trash, cleanup).IgnoreError();
  }
  return Json{{"path", JoinPath(call.segments)},
              {"type", target.type == EntryType::kFile ? "file" : "directory"},
              {"deleted", true}};
}

absl::StatusOr<Json> FilesProvider::SnapshotCreate(Call& call) {
  ASSIGN_OR_RETURN(std::optional<std::string> label, OptionalString(call.args(), "label"));
  if (label.has_value()) RETURN_IF_ERROR(CheckText(*label, kMaxLabelLength));
  ASSIGN_OR_RETURN(Location target, call.Target(false));
  if (!target.exists) return Fail(kNotFound);
  const absl::Time now = call.now;
  Manifest manifest;
  ASSIGN_OR_RETURN(manifest.id, NewSnapshotId(now));
  manifest.path = call.segments;
  manifest.label = label;
  manifest.created_at = common::FormatRfc3339(now);
  ASSIGN_OR_RETURN(manifest.version, VersionOf(target, options_.max_file_bytes, call.walk()));
  ASSIGN_OR_RETURN(const Usage copied, TreeUsage(target, call.segments, call.walk()));
  RETURN_IF_ERROR(CheckQuota(call, static_cast<int64_t>(copied.bytes) + 1024,
                             static_cast<int64_t>(copied.files) + 1));

  // Built in tmp/, then renamed into snapshots/ whole.
  const std::string staging = TemporaryName("s");
  if (mkdirat(call.tmp.get(), staging.c_str(), 0700) != 0) return Fail(kIoFailed);
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(UniqueFd staging_fd, OpenDirectory(call.tmp.get(), staging, false));
    RETURN_IF_ERROR(CopyTree(target.parent.get(), target.leaf, staging_fd.get(), kTreeDir,
                             options_.max_file_bytes, call.walk()));
    ASSIGN_OR_RETURN(Location manifest_file,
                     Locate(call.tmp.get(), staging, {kManifestFile}, false));
    RETURN_IF_ERROR(WriteFileAtomically(call.tmp.get(), manifest_file,
                                        ManifestToJson(manifest).dump(), WriteMode::kCreate));
    return Rename(call.tmp.get(), staging, call.snapshots.get(), manifest.id, RENAME_NOREPLACE);
  }();
  if (!status.ok()) {
    WalkBudget cleanup(deadline_clock_, absl::InfiniteFuture(), SIZE_MAX, SIZE_MAX);
    RemoveTree(call.tmp.get(), staging, cleanup).IgnoreError();
    return status;
  }
  ForgetUsage(call);
  Json out = {{"snapshotId", manifest.id},
              {"path", JoinPath(call.segments)},
              {"createdAt", manifest.created_at},
              {"version", manifest.version}};
  if (label.has_value()) out["label"] = *label;
  return out;
}

absl::StatusOr<Json> FilesProvider::SnapshotList(Call& call) {
  ASSIGN_OR_RETURN(int64_t limit,
                   IntegerOr(call.args(), "limit", options_.default_limit, 1,
                             static_cast<int64_t>(common::validation::kMaxSearchResults)));
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirectory(call.snapshots.get(), call.walk()));
  std::vector<Manifest> related;
  for (const DirEntry& entry : entries) {
    if (entry.type != EntryType::kDirectory) continue;
    absl::StatusOr<Manifest> manifest = ReadManifest(call.snapshots.get(), entry.name);
    if (!manifest.ok()) continue;
    // Snapshots of the path, of anything below it, or of a directory holding it.
    if (IsPrefix(manifest->path, call.segments) || IsPrefix(call.segments, manifest->path)) {
      related.push_back(*std::move(manifest));
    }
  }
  // Ids start with the creation time: newest first.
  std::sort(related.begin(), related.end(),
            [](const Manifest& a, const Manifest& b) { return a.id > b.id; });
  Json snapshots = Json::array();
  for (const Manifest& manifest : related) {
    if (snapshots.size() == static_cast<size_t>(limit)) break;
    Json item = {{"snapshotId", manifest.id},
                 {"path", JoinPath(manifest.path)},
                 {"createdAt", manifest.created_at},
                 {"version", manifest.version}};
    if (manifest.label.has_value()) item["label"] = *manifest.label;
    snapshots.push_back(std::move(item));
  }
  return Json{{"snapshots", std::move(snapshots)},
              {"truncated", related.size() > static_cast<size_t>(limit)}};
}

absl::StatusOr<Json> FilesProvider::SnapshotRestore(Call& call) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(call.args(), "snapshotId"));
  ASSIGN_OR_RETURN(std::optional<std::string> expected, ExpectedVersion(call.args()));
  ASSIGN_OR_RETURN(Manifest manifest, ReadManifest(call.snapshots.get(), id));
  if (!IsPrefix(manifest.path, call.segments)) return Fail(kSnapshotNotCovering);

  // The snapshot's copy of the path: tree/<path below the snapshot's root>.
  ASSIGN_OR_RETURN(UniqueFd snapshot_dir, OpenDirectory(call.snapshots.get(), id, false));
  const Segments below(call.segments.begin() + manifest.path.size(), call.segments.end());
  ASSIGN_OR_RETURN(Location source, Locate(snapshot_dir.get(), kTreeDir, below, false));
  if (!source.exists) return Fail(kSnapshotNotCovering);

  ASSIGN_OR_RETURN(Location target, call.Target(/*create_parents=*/true));
  std::optional<std::string> previous_version;
  if (target.exists) {
    ASSIGN_OR_RETURN(previous_version, VersionOf(target, options_.max_file_bytes, call.walk()));
  }
  RETURN_IF_ERROR(CheckExpected(expected, previous_version));
  // The restored tree counts in full (the one it replaces is not subtracted: bounded, not exact).
  ASSIGN_OR_RETURN(const Usage restoring, TreeUsage(source, below, call.walk()));
  RETURN_IF_ERROR(CheckQuota(call, static_cast<int64_t>(restoring.bytes),
                             static_cast<int64_t>(restoring.files)));

  const std::string staging = TemporaryName("r");
  absl::Status copied = CopyTree(source.parent.get(), source.leaf, call.tmp.get(), staging,
                                 options_.max_file_bytes, call.walk());
  WalkBudget cleanup(deadline_clock_, absl::InfiniteFuture(), SIZE_MAX, SIZE_MAX);
  if (!copied.ok()) {
    RemoveTree(call.tmp.get(), staging, cleanup).IgnoreError();
    return copied;
  }
  // Swapped in with one rename: the old tree (if any) lands in tmp/ and is removed.
  absl::Status swapped = Rename(call.tmp.get(), staging, target.parent.get(), target.leaf,
                                target.exists ? RENAME_EXCHANGE : RENAME_NOREPLACE);
  RemoveTree(call.tmp.get(), staging, cleanup).IgnoreError();
  RETURN_IF_ERROR(swapped);
  ForgetUsage(call);

  ASSIGN_OR_RETURN(Location restored, call.Target(false));
  WalkBudget version_budget(deadline_clock_, absl::InfiniteFuture(), options_.max_tree_entries,
                            options_.max_tree_bytes);
  ASSIGN_OR_RETURN(std::string version,
                   VersionOf(restored, options_.max_file_bytes, version_budget));
  Json out = {{"snapshotId", id}, {"path", JoinPath(call.segments)}, {"version", version}};
  if (previous_version.has_value()) out["previousVersion"] = *previous_version;
  return out;
}

// ---- per-owner quotas ----

absl::StatusOr<FilesProvider::Usage> FilesProvider::TreeUsage(const Location& target,
                                                              const Segments& segments,
                                                              WalkBudget& budget) {
  ASSIGN_OR_RETURN(TreeCount count, CountTree(target, segments, budget));
  return Usage{count.bytes, count.files};
}

absl::StatusOr<FilesProvider::Usage> FilesProvider::OwnerUsage(Call& call) {
  {
    absl::MutexLock lock(&usage_mu_);
    if (auto it = usage_.find(call.owner_key); it != usage_.end()) return it->second;
  }
  // Walked once (then kept by the writers, under the owner's lock): the workspace and the
  // snapshots. An area too large to walk is over any quota (fail closed).
  const size_t max_entries =
      options_.max_owner_files == 0 ? SIZE_MAX : options_.max_owner_files * 4 + 1024;
  WalkBudget budget(deadline_clock_, absl::InfiniteFuture(), max_entries, SIZE_MAX);
  Usage usage;
  for (const char* dir : {kWorkspaceDir, kSnapshotsDir}) {
    absl::StatusOr<Location> area = Locate(call.owner.get(), dir, {}, false);
    if (!area.ok()) return Fail(kIoFailed);
    absl::StatusOr<TreeCount> count = CountTree(*area, {}, budget);
    if (!count.ok()) {
      return count.status().message() == kTreeTooLarge ? Fail(kQuotaExceeded) : count.status();
    }
    usage.bytes += count->bytes;
    usage.files += count->files;
  }
  absl::MutexLock lock(&usage_mu_);
  usage_[call.owner_key] = usage;
  return usage;
}

absl::Status FilesProvider::CheckQuota(Call& call, int64_t bytes, int64_t files) {
  if (options_.max_owner_bytes == 0 && options_.max_owner_files == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const Usage usage, OwnerUsage(call));
  const auto over = [](uint64_t used, int64_t more, uint64_t quota) {
    return quota > 0 && more > 0 && used + static_cast<uint64_t>(more) > quota;
  };
  if (over(usage.bytes, bytes, options_.max_owner_bytes) ||
      over(usage.files, files, options_.max_owner_files)) {
    return Fail(kQuotaExceeded);
  }
  return absl::OkStatus();
}

void FilesProvider::Account(const Call& call, int64_t bytes, int64_t files) {
  absl::MutexLock lock(&usage_mu_);
  auto it = usage_.find(call.owner_key);
  if (it == usage_.end()) return;
  const auto add = [](uint64_t& total, int64_t delta) {
    total = delta < 0 && static_cast<uint64_t>(-delta) > total ? 0 : total + delta;
  };
  add(it->second.bytes, bytes);
  add(it->second.files, files);
}

void FilesProvider::ForgetUsage(const Call& call) {
  absl::MutexLock lock(&usage_mu_);
  usage_.erase(call.owner_key);
}

}  // namespace sharedos::envelope::files
