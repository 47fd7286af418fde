#include "envelope_svc/providers/files/files_provider.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/json/proto_json.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::files {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::protocol::v1::ToolResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using Json = nlohmann::json;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const absl::Time kStart =
    absl::FromCivil(absl::CivilSecond(2026, 8, 18, 9, 0, 0), absl::UTCTimeZone());

class FilesProviderTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeProvider(FilesProvider::Options{}); }

  void MakeProvider(FilesProvider::Options options) {
    std::string pattern = ::testing::TempDir() + "/filesXXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    root_ = base_ + "/root";
    ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((base_ + "/outside").c_str(), 0700), 0);
    std::ofstream(base_ + "/outside/secret.txt") << "secret";
    options.root = root_;
    auto provider = FilesProvider::Create(std::move(options), clock_, deadline_clock_);
    ASSERT_THAT(provider, IsOk());
    provider_ = *std::move(provider);
  }

  // The workspace directory of user-alice (created by the first call).
  std::string Workspace() { return root_ + "/human/user-alice/workspace"; }

  ToolResult Run(const std::string& action, const std::vector<std::string>& path,
                 const Json& args = Json::object(), const std::string& owner = "user-alice",
                 absl::Time deadline = absl::InfiniteFuture()) {
    v1::InvokeRequest request;
    request.set_call_id("call-1");
    request.set_tool("files.tool");
    request.set_action(action);
    request.mutable_resource()->set_namespace_("files");
    for (const std::string& segment : path) request.mutable_resource()->add_path(segment);
    request.mutable_resource()->mutable_owner()->set_human_user_id(owner);
    *request.mutable_arguments() = *common::JsonToProtoStruct(args);
    request.mutable_context()->mutable_owner()->set_human_user_id("user-alice");
    auto result = provider_->Invoke(request, deadline);
    EXPECT_THAT(result, IsOk());
    EXPECT_EQ(result->call_id(), "call-1");
    EXPECT_EQ(result->tool(), "files.tool");
    EXPECT_TRUE(result->has_completed_at());
    return *result;
  }

  // The output of a succeeded result (fails the test otherwise).
  Json Ok(const ToolResult& result) {
    EXPECT_EQ(result.status(), protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED) << result.error().code();
    auto json = common::ProtoValueToJson(result.output());
    EXPECT_THAT(json, IsOk());
    return json.ok() ? *json : Json();
  }

  // The code of a failed result (fails the test otherwise).
  std::string Code(const ToolResult& result) {
    EXPECT_EQ(result.status(), protocol::v1::TOOL_RESULT_STATUS_FAILED);
    EXPECT_FALSE(result.error().message().empty());
    return result.error().code();
  }

  void Put(const std::string& path, const std::string& content) {
    Ok(Run("create", Split(path), {{"content", content}}));
  }

  static std::vector<std::string> Split(const std::string& path) {
    std::vector<std::string> segments;
    std::stringstream in(path);
    for (std::string s; std::getline(in, s, '/');) segments.push_back(s);
    return segments;
  }

  std::vector<std::string> OwnerTmp() {
    std::vector<std::string> names;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir((root_ + "/human/user-alice/tmp").c_str()),
                                            closedir);
    if (dir == nullptr) return names;
    while (struct dirent* entry = readdir(dir.get())) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    return names;
  }

  common::SimulatedClock clock_{kStart};
  // Real time in production; here a clock the deadline test controls.
  common::SimulatedClock deadline_clock_{kStart};
  std::string base_;
  std::string root_;
  std::unique_ptr<FilesProvider> provider_;
};

// ---- list / stat / read ----

TEST_F(FilesProviderTest, ListsTheWorkspace) {
  EXPECT_EQ(Ok(Run("list", {})),
            (Json{{"path", ""}, {"entries", Json::array()}, {"truncated", false}}));
  Put("Workspace/b.md", "bb");
  Put("Workspace/a/x.md", "x");
  EXPECT_EQ(Ok(Run("list", {"Workspace"})),
            (Json{{"path", "Workspace"},
                  {"entries",
                   {{{"name", "a"}, {"type", "directory"}},
                    {{"name", "b.md"}, {"type", "file"}, {"size", 2}}}},
                  {"truncated", false}}));
  EXPECT_EQ(Code(Run("list", {"Nope"})), "not_found");
  EXPECT_EQ(Code(Run("list", {"Workspace", "b.md"})), "not_a_directory");
}

TEST_F(FilesProviderTest, ListIsTruncated) {
  FilesProvider::Options options;
  options.max_list_entries = 2;
  MakeProvider(options);
  for (const char* name : {"a", "b", "c"}) Put(name, "x");
  Json out = Ok(Run("list", {}));
  EXPECT_EQ(out["entries"].size(), 2u);
  EXPECT_EQ(out["truncated"], true);
}

TEST_F(FilesProviderTest, StatsFilesAndDirectories) {
  Put("Workspace/policy.md", "policy");
  Json file = Ok(Run("stat", {"Workspace", "policy.md"}));
  EXPECT_EQ(file["type"], "file");
  EXPECT_EQ(file["size"], 6);
  EXPECT_EQ(file["version"], ContentVersion("policy"));
  Json dir = Ok(Run("stat", {"Workspace"}));
  EXPECT_EQ(dir["type"], "directory");
  EXPECT_EQ(dir["entries"], 1);
  EXPECT_EQ(dir["version"].get<std::string>().size(), 64u);
  EXPECT_EQ(Code(Run("stat", {"Workspace", "none"})), "not_found");
}

TEST_F(FilesProviderTest, ReadsTextAndBinary) {
  Put("a.md", "héllo");
  EXPECT_EQ(Ok(Run("read", {"a.md"})), (Json{{"path", "a.md"},
                                             {"content", "héllo"},
                                             {"encoding", "utf-8"},
                                             {"size", 6},
                                             {"version", ContentVersion("héllo")}}));
  std::ofstream(Workspace() + "/bin") << std::string("\xff\xfe\x00", 3);
  Json binary = Ok(Run("read", {"bin"}));
  EXPECT_EQ(binary["encoding"], "base64url");
  EXPECT_EQ(binary["content"], "__4A");
  EXPECT_EQ(Code(Run("read", {"none"})), "not_found");
  EXPECT_EQ(Code(Run("read", {})), "not_a_file");
}

TEST_F(FilesProviderTest, ReadRefusesLargeFiles) {
  FilesProvider::Options options;
  options.max_file_bytes = 4;
  MakeProvider(options);
  Put("a", "1234");
  std::ofstream(Workspace() + "/big") << "12345";
  EXPECT_EQ(Code(Run("read", {"big"})), "file_too_large");
  EXPECT_EQ(Code(Run("create", {"b"}, {{"content", "12345"}})), "file_too_large");
  EXPECT_EQ(Code(Run("append", {"a"}, {{"content", "5"}})), "file_too_large");
}

// ---- search / grep ----

TEST_F(FilesProviderTest, SearchesNamesAndContent) {
  Put("Workspace/Notes.md", "nothing");
  Put("Workspace/scratch/draft.md", "the NOTES are here");
  Put("Workspace/other.md", "unrelated");
  EXPECT_EQ(
      Ok(Run("search", {"Workspace"}, {{"query", "notes"}})),
      (Json{{"results",
             {{{"path", "Workspace/Notes.md"}, {"type", "file"}, {"match", "name"}},
              {{"path", "Workspace/scratch/draft.md"}, {"type", "file"}, {"match", "content"}}}},
            {"truncated", false}}));
  Json limited = Ok(Run("search", {"Workspace"}, {{"query", "notes"}, {"limit", 1}}));
  EXPECT_EQ(limited["results"].size(), 1u);
  EXPECT_EQ(limited["truncated"], true);
  // Confined to the path searched.
  EXPECT_EQ(Ok(Run("search", {"Workspace", "scratch"}, {{"query", "Notes.md"}}))["results"],
            Json::array());
}

struct ArgumentCase {
  std::string name;
  std::string action;
  Json args;
  std::string code;
};

class FilesArgumentTest : public FilesProviderTest,
                          public ::testing::WithParamInterface<ArgumentCase> {};

TEST_P(FilesArgumentTest, IsRefusedInBand) {
  Put("a.md", "text");
  EXPECT_EQ(Code(Run(GetParam().action, {}, GetParam().args)), GetParam().code);
}

INSTANTIATE_TEST_SUITE_P(
    Limits, FilesArgumentTest,
    ::testing::Values(
        ArgumentCase{"SearchWithoutQuery", "search", Json::object(), "invalid_arguments"},
        ArgumentCase{"SearchQueryNotAString", "search", {{"query", 3}}, "invalid_arguments"},
        ArgumentCase{"SearchEmptyQuery", "search", {{"query", ""}}, "invalid_arguments"},
        ArgumentCase{
            "SearchQueryTooLong", "search", {{"query", std::string(8193, 'q')}}, "limit_exceeded"},
        ArgumentCase{"SearchLimitZero", "search", {{"query", "a"}, {"limit", 0}}, "limit_exceeded"},
        ArgumentCase{
            "SearchLimitTooHigh", "search", {{"query", "a"}, {"limit", 101}}, "limit_exceeded"},
        ArgumentCase{
            "SearchLimitFraction", "search", {{"query", "a"}, {"limit", 1.5}}, "invalid_arguments"},
        ArgumentCase{"GrepWithoutPattern", "grep", Json::object(), "invalid_arguments"},
        ArgumentCase{
            "GrepPatternTooLong", "grep", {{"pattern", std::string(8193, 'p')}}, "limit_exceeded"},
        ArgumentCase{
            "GrepBadMode", "grep", {{"pattern", "a"}, {"mode", "glob"}}, "invalid_arguments"},
        ArgumentCase{"GrepBadRegex", "grep", {{"pattern", "(unclosed"}}, "invalid_pattern"},
        ArgumentCase{"GrepContextTooLarge",
                     "grep",
                     {{"pattern", "a"}, {"contextBefore", 101}},
                     "limit_exceeded"},
        ArgumentCase{"GrepNegativeContext",
                     "grep",
                     {{"pattern", "a"}, {"contextAfter", -1}},
                     "limit_exceeded"},
        ArgumentCase{
            "SnapshotListLimitTooHigh", "snapshot:list", {{"limit", 101}}, "limit_exceeded"},
        ArgumentCase{"SnapshotLabelTooLong",
                     "snapshot:create",
                     {{"label", std::string(257, 'l')}},
                     "limit_exceeded"},
        ArgumentCase{"CreateWithoutContent", "create", Json::object(), "invalid_arguments"},
        ArgumentCase{
            "DeleteRecursiveNotABool", "delete", {{"recursive", "yes"}}, "invalid_arguments"}),
    [](const ::testing::TestParamInfo<ArgumentCase>& info) { return info.param.name; });

TEST_F(FilesProviderTest, SearchQueryAtTheLimitIsAccepted) {
  Put("a.md", "x");
  EXPECT_EQ(Ok(Run("search", {}, {{"query", std::string(8192, 'q')}, {"limit", 100}}))["results"],
            Json::array());
}

TEST_F(FilesProviderTest, GrepsLinesWithContext) {
  Put("log.txt", "one\nTwo apples\nthree\nfour apples\nfive\n");
  Put("sub/other.txt", "apples everywhere");
  Json out = Ok(Run("grep", {"log.txt"},
                    {{"pattern", "t[a-z]+ apples"},
                     {"caseSensitive", false},
                     {"contextBefore", 1},
                     {"contextAfter", 1}}));
  EXPECT_EQ(out, (Json{{"matches",
                        {{{"path", "log.txt"},
                          {"line", 2},
                          {"text", "Two apples"},
                          {"before", {"one"}},
                          {"after", {"three"}}}}},
                       {"truncated", false}}));
  Json all = Ok(Run("grep", {}, {{"pattern", "apples"}}));
  ASSERT_EQ(all["matches"].size(), 3u);
  EXPECT_EQ(all["matches"][2]["path"], "sub/other.txt");
  // Literal mode: "." is a dot.
  EXPECT_EQ(Ok(Run("grep", {}, {{"pattern", "f.ve"}, {"mode", "literal"}}))["matches"],
            Json::array());
  EXPECT_EQ(Ok(Run("grep", {}, {{"pattern", "f.ve"}}))["matches"].size(), 1u);
  // Case-sensitive by default.
  EXPECT_EQ(Ok(Run("grep", {}, {{"pattern", "two"}}))["matches"], Json::array());
}

TEST_F(FilesProviderTest, GrepIsLinearOnPathologicalPatterns) {
  // Catastrophic for backtracking engines; RE2 answers at once.
  Put("a.txt", std::string(100000, 'a') + "!");
  EXPECT_EQ(Ok(Run("grep", {}, {{"pattern", "(a+)+$"}}))["matches"], Json::array());
}

TEST_F(FilesProviderTest, GrepMatchesAreCapped) {
  FilesProvider::Options options;
  options.max_grep_matches = 2;
  MakeProvider(options);
  Put("a.txt", "x\nx\nx\n");
  Json out = Ok(Run("grep", {}, {{"pattern", "x"}}));
  EXPECT_EQ(out["matches"].size(), 2u);
  EXPECT_EQ(out["truncated"], true);
}

// ---- writes ----

TEST_F(FilesProviderTest, CreatesWithParents) {
  EXPECT_EQ(
      Ok(Run("create", {"Workspace", "scratch", "draft.md"}, {{"content", "v1"}})),
      (Json{
          {"path", "Workspace/scratch/draft.md"}, {"version", ContentVersion("v1")}, {"size", 2}}));
  EXPECT_EQ(ReadText(Workspace() + "/Workspace/scratch/draft.md"), "v1");
  EXPECT_EQ(Code(Run("create", {"Workspace", "scratch", "draft.md"}, {{"content", "v2"}})),
            "already_exists");
  EXPECT_EQ(Code(Run("create", {"Workspace", "scratch"}, {{"content", "v2"}})), "already_exists");
  EXPECT_EQ(Code(Run("create", {}, {{"content", "x"}})), "invalid_path");
  EXPECT_EQ(ReadText(Workspace() + "/Workspace/scratch/draft.md"), "v1");
  EXPECT_THAT(OwnerTmp(), IsEmpty());
}

TEST_F(FilesProviderTest, ReplacesHonouringExpectedVersion) {
  Put("d.md", "v1");
  Json replaced =
      Ok(Run("replace", {"d.md"}, {{"content", "v2"}, {"expectedVersion", ContentVersion("v1")}}));
  EXPECT_EQ(replaced, (Json{{"path", "d.md"},
                            {"version", ContentVersion("v2")},
                            {"previousVersion", ContentVersion("v1")},
                            {"size", 2}}));
  ToolResult stale =
      Run("replace", {"d.md"}, {{"content", "v3"}, {"expectedVersion", ContentVersion("v1")}});
  EXPECT_EQ(Code(stale), "version_conflict");
  EXPECT_FALSE(stale.error().retryable());
  EXPECT_EQ(ReadText(Workspace() + "/d.md"), "v2");
  EXPECT_EQ(Code(Run("replace", {"none.md"}, {{"content", "x"}})), "not_found");
  Put("dir/x", "x");
  EXPECT_EQ(Code(Run("replace", {"dir"}, {{"content", "x"}})), "not_a_file");
  EXPECT_THAT(OwnerTmp(), IsEmpty());
}

TEST_F(FilesProviderTest, AppendsHonouringExpectedVersion) {
  Put("log", "a");
  EXPECT_EQ(Ok(Run("append", {"log"}, {{"content", "b"}}))["version"], ContentVersion("ab"));
  EXPECT_EQ(Ok(Run("append", {"log"},
                   {{"content", "c"}, {"expectedVersion", ContentVersion("ab")}}))["size"],
            3);
  EXPECT_EQ(Code(Run("append", {"log"}, {{"content", "d"}, {"expectedVersion", "0000"}})),
            "version_conflict");
  EXPECT_EQ(ReadText(Workspace() + "/log"), "abc");
  // Append never creates (a create grant is a different authority).
  EXPECT_EQ(Code(Run("append", {"new"}, {{"content", "x"}})), "not_found");
}

TEST_F(FilesProviderTest, ConcurrentAppendsAreSerialised) {
  Put("log", "");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) Run("append", {"log"}, {{"content", "x"}});
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ReadText(Workspace() + "/log"), std::string(40, 'x'));
}

TEST_F(FilesProviderTest, DeletesFilesAndTrees) {
  Put("a.md", "a");
  Put("tree/x/y.md", "y");
  EXPECT_EQ(Code(Run("delete", {"a.md"}, {{"expectedVersion", ContentVersion("b")}})),
            "version_conflict");
  EXPECT_EQ(Ok(Run("delete", {"a.md"}, {{"expectedVersion", ContentVersion("a")}})),
            (Json{{"path", "a.md"}, {"type", "file"}, {"deleted", true}}));
  EXPECT_EQ(Code(Run("delete", {"a.md"})), "not_found");
  EXPECT_EQ(Code(Run("delete", {"tree"})), "directory_not_empty");
  Json tree = Ok(Run("stat", {"tree"}));
  EXPECT_EQ(Code(Run("delete", {"tree"}, {{"recursive", true}, {"expectedVersion", "stale"}})),
            "version_conflict");
  EXPECT_EQ(Ok(Run("delete", {"tree"},
                   {{"recursive", true}, {"expectedVersion", tree["version"]}}))["deleted"],
            true);
  EXPECT_EQ(Code(Run("stat", {"tree"})), "not_found");
  EXPECT_EQ(Code(Run("delete", {}, {{"recursive", true}})), "invalid_path");
  Put("empty/x", "x");
  Ok(Run("delete", {"empty", "x"}));
  EXPECT_EQ(Ok(Run("delete", {"empty"}))["type"], "directory");
  EXPECT_THAT(OwnerTmp(), IsEmpty());
}

// ---- snapshots ----

TEST_F(FilesProviderTest, SnapshotRestoreRoundTrip) {
  Put("Workspace/scratch/draft.md", "v1");
  Put("Workspace/policy.md", "policy");
  Json snapshot = Ok(Run("snapshot:create", {"Workspace"}, {{"label", "before"}}));
  const std::string id = snapshot["snapshotId"];
  EXPECT_EQ(snapshot["path"], "Workspace");
  EXPECT_EQ(snapshot["label"], "before");
  EXPECT_EQ(snapshot["createdAt"], "2026-08-18T09:00:00Z");

  Json edited = Ok(Run("replace", {"Workspace", "scratch", "draft.md"}, {{"content", "v2"}}));
  Put("Workspace/scratch/extra.md", "extra");
  Json current = Ok(Run("stat", {"Workspace", "scratch"}));

  // A stale expectedVersion changes nothing.
  EXPECT_EQ(Code(Run("snapshot:restore", {"Workspace", "scratch"},
                     {{"snapshotId", id}, {"expectedVersion", "stale"}})),
            "version_conflict");
  EXPECT_EQ(ReadText(Workspace() + "/Workspace/scratch/draft.md"), "v2");

  // Restoring the scratch subtree from the workspace-wide snapshot.
  Json restored = Ok(Run("snapshot:restore", {"Workspace", "scratch"},
                         {{"snapshotId", id}, {"expectedVersion", current["version"]}}));
  EXPECT_EQ(restored["previousVersion"], current["version"]);
  EXPECT_EQ(ReadText(Workspace() + "/Workspace/scratch/draft.md"), "v1");
  struct stat st;
  EXPECT_NE(stat((Workspace() + "/Workspace/scratch/extra.md").c_str(), &st), 0);
  EXPECT_EQ(restored["version"], Ok(Run("stat", {"Workspace", "scratch"}))["version"]);
  EXPECT_THAT(OwnerTmp(), IsEmpty());
}

TEST_F(FilesProviderTest, SnapshotRestoresADeletedFile) {
  Put("a.md", "v1");
  const std::string id = Ok(Run("snapshot:create", {"a.md"}))["snapshotId"];
  Ok(Run("delete", {"a.md"}));
  Json restored = Ok(Run("snapshot:restore", {"a.md"}, {{"snapshotId", id}}));
  EXPECT_FALSE(restored.contains("previousVersion"));
  EXPECT_EQ(ReadText(Workspace() + "/a.md"), "v1");
  // expectedVersion on an absent target is a conflict.
  Ok(Run("delete", {"a.md"}));
  EXPECT_EQ(Code(Run("snapshot:restore", {"a.md"},
                     {{"snapshotId", id}, {"expectedVersion", ContentVersion("v1")}})),
            "version_conflict");
}

TEST_F(FilesProviderTest, SnapshotRestoreRefusals) {
  Put("Workspace/scratch/a.md", "a");
  Put("Workspace/ledger/b.md", "b");
  const std::string id = Ok(Run("snapshot:create", {"Workspace", "scratch"}))["snapshotId"];
  EXPECT_EQ(Code(Run("snapshot:restore", {"Workspace", "ledger"}, {{"snapshotId", id}})),
            "snapshot_not_covering");
  EXPECT_EQ(Code(Run("snapshot:restore", {"Workspace"}, {{"snapshotId", id}})),
            "snapshot_not_covering");
  EXPECT_EQ(
      Code(Run("snapshot:restore", {"Workspace", "scratch", "none.md"}, {{"snapshotId", id}})),
      "snapshot_not_covering");
  for (const std::string& bad : {std::string("snap-1"), std::string("../../etc"),
                                 "snap-00000000000000000000-" + std::string(32, 'f')}) {
    EXPECT_EQ(Code(Run("snapshot:restore", {"Workspace", "scratch"}, {{"snapshotId", bad}})),
              "snapshot_not_found")
        << bad;
  }
  // Another owner's snapshot id is unknown to this owner.
  Put("x", "x");
  EXPECT_EQ(
      Code(Run("snapshot:restore", {"Workspace", "scratch"}, {{"snapshotId", id}}, "user-bob")),
      "snapshot_not_found");
  EXPECT_EQ(Code(Run("snapshot:create", {"none"})), "not_found");
}

TEST_F(FilesProviderTest, SnapshotListFiltersAndOrders) {
  Put("Workspace/scratch/a.md", "a");
  Put("Other/b.md", "b");
  const std::string whole = Ok(Run("snapshot:create", {}, {{"label", "all"}}))["snapshotId"];
  clock_.AdvanceTime(absl::Seconds(1));
  const std::string scratch = Ok(Run("snapshot:create", {"Workspace", "scratch"}))["snapshotId"];
  clock_.AdvanceTime(absl::Seconds(1));
  const std::string other = Ok(Run("snapshot:create", {"Other"}))["snapshotId"];

  auto ids = [&](const Json& out) {
    std::vector<std::string> result;
    for (const Json& item : out["snapshots"]) result.push_back(item["snapshotId"]);
    return result;
  };
  // Newest first; the path's own, those below it and those holding it.
  EXPECT_THAT(ids(Ok(Run("snapshot:list", {"Workspace"}))), ElementsAre(scratch, whole));
  EXPECT_THAT(ids(Ok(Run("snapshot:list", {}))), ElementsAre(other, scratch, whole));
  Json limited = Ok(Run("snapshot:list", {}, {{"limit", 1}}));
  EXPECT_THAT(ids(limited), ElementsAre(other));
  EXPECT_EQ(limited["truncated"], true);
  EXPECT_EQ(Ok(Run("snapshot:list", {}))["snapshots"][2]["label"], "all");
}

TEST_F(FilesProviderTest, SnapshotsAreNotReachableThroughPaths) {
  Put("a.md", "a");
  Ok(Run("snapshot:create", {}));
  EXPECT_EQ(Ok(Run("list", {}))["entries"].size(), 1u);
  EXPECT_EQ(Code(Run("list", {"snapshots"})), "not_found");
  EXPECT_EQ(Ok(Run("search", {}, {{"query", "snap"}}))["results"], Json::array());
}

// ---- confinement ----

class ConfinementTest : public FilesProviderTest {
 protected:
  void SetUp() override {
    FilesProviderTest::SetUp();
    Put("Workspace/plain.md", "plain");
    ASSERT_EQ(symlink((base_ + "/outside/secret.txt").c_str(), (Workspace() + "/link.txt").c_str()),
              0);
    ASSERT_EQ(symlink((base_ + "/outside").c_str(), (Workspace() + "/linkdir").c_str()), 0);
    ASSERT_EQ(mkfifo((Workspace() + "/pipe").c_str(), 0600), 0);
  }

  void ExpectOutsideUntouched() {
    EXPECT_EQ(ReadText(base_ + "/outside/secret.txt"), "secret");
    struct stat st;
    EXPECT_NE(stat((base_ + "/outside/new.txt").c_str(), &st), 0);
  }
};

struct AttackCase {
  std::string name;
  std::string action;
  std::vector<std::string> path;
  Json args;
};

class ConfinementAttackTest : public ConfinementTest,
                              public ::testing::WithParamInterface<AttackCase> {};

TEST_P(ConfinementAttackTest, IsRefused) {
  ToolResult result = Run(GetParam().action, GetParam().path, GetParam().args);
  EXPECT_THAT(Code(result), ::testing::AnyOf("path_not_permitted", "invalid_path"));
  EXPECT_THAT(result.error().message(), Not(HasSubstr("secret")));
  ExpectOutsideUntouched();
}

INSTANTIATE_TEST_SUITE_P(
    Attacks, ConfinementAttackTest,
    ::testing::Values(
        AttackCase{"ReadThroughSymlink", "read", {"link.txt"}, Json::object()},
        AttackCase{"StatSymlink", "stat", {"link.txt"}, Json::object()},
        AttackCase{"ReplaceThroughSymlink", "replace", {"link.txt"}, {{"content", "pwned"}}},
        AttackCase{"AppendThroughSymlink", "append", {"link.txt"}, {{"content", "pwned"}}},
        AttackCase{"DeleteSymlink", "delete", {"link.txt"}, Json::object()},
        AttackCase{"CreateOverSymlink", "create", {"link.txt"}, {{"content", "pwned"}}},
        AttackCase{"ReadInSymlinkedDir", "read", {"linkdir", "secret.txt"}, Json::object()},
        AttackCase{"CreateInSymlinkedDir", "create", {"linkdir", "new.txt"}, {{"content", "x"}}},
        AttackCase{"ListSymlinkedDir", "list", {"linkdir"}, Json::object()},
        AttackCase{"DeleteSymlinkedDir", "delete", {"linkdir"}, {{"recursive", true}}},
        AttackCase{"SnapshotSymlinkedDir", "snapshot:create", {"linkdir"}, Json::object()},
        AttackCase{"GrepSymlinkedDir", "grep", {"linkdir"}, {{"pattern", "secret"}}},
        AttackCase{"ReadFifo", "read", {"pipe"}, Json::object()},
        AttackCase{"AppendFifo", "append", {"pipe"}, {{"content", "x"}}},
        AttackCase{
            "DotDot", "read", {"..", "..", "..", "..", "outside", "secret.txt"}, Json::object()},
        AttackCase{"DotDotCreate", "create", {"Workspace", "..", "..", "x"}, {{"content", "x"}}},
        AttackCase{"AbsoluteSegment", "read", {"/etc/passwd"}, Json::object()},
        AttackCase{"SlashInSegment", "read", {"../outside/secret.txt"}, Json::object()},
        AttackCase{"EmptySegment", "read", {"Workspace", "", "plain.md"}, Json::object()}),
    [](const ::testing::TestParamInfo<AttackCase>& info) { return info.param.name; });

TEST_F(ConfinementTest, WalksSkipSymlinksAndSpecialFiles) {
  EXPECT_EQ(Ok(Run("grep", {}, {{"pattern", "secret"}}))["matches"], Json::array());
  EXPECT_EQ(Ok(Run("search", {}, {{"query", "secret"}}))["results"], Json::array());
  std::vector<std::string> names;
  Json listed = Ok(Run("list", {}));
  for (const Json& entry : listed["entries"]) names.push_back(entry["name"]);
  EXPECT_THAT(names, ElementsAre("Workspace")) << listed.dump();
  // Snapshots copy neither; a restore brings back only what was copied.
  const std::string id = Ok(Run("snapshot:create", {}))["snapshotId"];
  Ok(Run("snapshot:restore", {}, {{"snapshotId", id}}));
  struct stat st;
  EXPECT_NE(lstat((Workspace() + "/link.txt").c_str(), &st), 0);
  EXPECT_EQ(ReadText(Workspace() + "/Workspace/plain.md"), "plain");
  ExpectOutsideUntouched();
}

TEST_F(ConfinementTest, HardLinkIsRefused) {
  ASSERT_EQ(link((base_ + "/outside/secret.txt").c_str(), (Workspace() + "/hard.txt").c_str()), 0);
  EXPECT_EQ(Code(Run("read", {"hard.txt"})), "path_not_permitted");
  EXPECT_EQ(Code(Run("replace", {"hard.txt"}, {{"content", "pwned"}})), "path_not_permitted");
  ExpectOutsideUntouched();
}

TEST_F(ConfinementTest, SymlinkedOwnerDirectoryIsRefused) {
  // Someone plants a symlink where another owner's area would be created.
  ASSERT_EQ(mkdir((root_ + "/agent").c_str(), 0700), 0);
  ASSERT_EQ(symlink((base_ + "/outside").c_str(), (root_ + "/agent/mallory").c_str()), 0);
  v1::InvokeRequest request;
  request.set_call_id("c");
  request.set_tool("files.read");
  request.set_action("read");
  request.mutable_resource()->set_namespace_("files");
  request.mutable_resource()->add_path("secret.txt");
  request.mutable_resource()->mutable_owner()->set_agent_id("mallory");
  auto result = provider_->Invoke(request, absl::InfiniteFuture());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(Code(*result), "path_not_permitted");
}

// ---- owners, deadlines, dispatch ----

TEST_F(FilesProviderTest, OwnersAreIsolated) {
  Put("a.md", "alice");
  EXPECT_EQ(Code(Run("read", {"a.md"}, Json::object(), "user-bob")), "not_found");
  Ok(Run("create", {"a.md"}, {{"content", "bob"}}, "user-bob"));
  EXPECT_EQ(Ok(Run("read", {"a.md"}))["content"], "alice");
  // A hostile owner id stays one directory below the root.
  Ok(Run("create", {"x"}, {{"content", "x"}}, "../../outside"));
  EXPECT_EQ(EncodeOwnerId("../../outside"), "%2E.%2F..%2Foutside");
  EXPECT_EQ(ReadText(root_ + "/human/%2E.%2F..%2Foutside/workspace/x"), "x");
  struct stat st;
  EXPECT_NE(stat((base_ + "/outside/workspace").c_str(), &st), 0);
}

TEST(EncodeOwnerIdTest, NeverEscapes) {
  EXPECT_EQ(EncodeOwnerId("user-alice"), "user-alice");
  EXPECT_EQ(EncodeOwnerId("a.b_c"), "a.b_c");
  EXPECT_EQ(EncodeOwnerId(".."), "%2E.");
  EXPECT_EQ(EncodeOwnerId("."), "%2E");
  EXPECT_EQ(EncodeOwnerId("a/b"), "a%2Fb");
  EXPECT_EQ(EncodeOwnerId("~x"), "%7Ex");
  const std::string long_id(256, 'a');
  EXPECT_EQ(EncodeOwnerId(long_id).size(), 65u);
  EXPECT_EQ(EncodeOwnerId(long_id)[0], '~');
}

TEST_F(FilesProviderTest, DeadlineIsHonoured) {
  Put("a.md", "a");
  Put("dir/b.md", "b");
  EXPECT_EQ(
      Ok(Run("read", {"a.md"}, Json::object(), "user-alice", kStart + absl::Seconds(1)))["size"],
      1);
  ToolResult late = Run("read", {"a.md"}, Json::object(), "user-alice", kStart);
  EXPECT_EQ(Code(late), "deadline_exceeded");
  EXPECT_TRUE(late.error().retryable());
  // Checked as walks proceed: the deadline passes while the tree is visited.
  deadline_clock_.SetStep(absl::Seconds(1));
  EXPECT_EQ(Code(Run("search", {}, {{"query", "zzz"}}, "user-alice", kStart + absl::Seconds(2))),
            "deadline_exceeded");
}

TEST_F(FilesProviderTest, WorldClockIsReadOncePerCall) {
  clock_.SetStep(absl::Seconds(1));
  Put("a.md", "a");
  Put("b.md", "b");
  Ok(Run("search", {}, {{"query", "zzz"}}));
  // Three calls, three seconds, however many entries the search visited.
  EXPECT_EQ(clock_.Now(), kStart + absl::Seconds(3));
}

TEST_F(FilesProviderTest, UnknownActionAndNamespaceAreRefused) {
  EXPECT_EQ(Code(Run("purge", {})), "unsupported_action");
  EXPECT_EQ(Code(Run("snapshot:*", {})), "unsupported_action");
  v1::InvokeRequest request;
  request.set_action("read");
  request.mutable_resource()->set_namespace_("repo");
  request.mutable_resource()->mutable_owner()->set_human_user_id("user-alice");
  auto result = provider_->Invoke(request, absl::InfiniteFuture());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(Code(*result), "unsupported_resource");
}

TEST_F(FilesProviderTest, ListToolsAnswersTheConfiguredDefinitions) {
  FilesProvider::Options options;
  options.tools.emplace_back().set_name("files.read");
  MakeProvider(options);
  auto tools = provider_->ListTools(v1::ProviderContext(), absl::InfiniteFuture());
  ASSERT_THAT(tools, IsOk());
  ASSERT_EQ(tools->size(), 1u);
  EXPECT_EQ((*tools)[0].name(), "files.read");
}

TEST(FilesProviderCreateTest, RootMustBeADirectory) {
  common::SimulatedClock clock;
  EXPECT_THAT(
      FilesProvider::Create(FilesProvider::Options{}, clock),
      ::sharedos::common::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("root: empty")));
  FilesProvider::Options options;
  options.root = ::testing::TempDir() + "/does-not-exist";
  EXPECT_THAT(FilesProvider::Create(options, clock),
              ::sharedos::common::StatusIs(absl::StatusCode::kInvalidArgument));
}

// Issue 34 (observation 3): grep counts the bytes it emits — context lines repeat lines in many
// matches — and stops at the call's max_result_bytes: RESOURCE_EXHAUSTED, never in band.
TEST_F(FilesProviderTest, GrepStopsAtTheBytesItEmitsNotOnlyTheBytesItReads) {
  std::string content;
  for (int i = 0; i < 400; ++i) content += "match " + std::string(200, 'x') + "\n";
  Put("big.txt", content);  // ~82 KB read
  v1::InvokeRequest request;
  request.set_call_id("call-1");
  request.set_tool("files.grep");
  request.set_action("grep");
  request.mutable_resource()->set_namespace_("files");
  request.mutable_resource()->mutable_owner()->set_human_user_id("user-alice");
  request.mutable_context()->mutable_owner()->set_human_user_id("user-alice");
  *request.mutable_arguments() = *common::JsonToProtoStruct(
      Json{{"pattern", "match"}, {"contextBefore", 100}, {"contextAfter", 100}});
  // Uncapped, the answer would be ~400 matches × 201 lines × 200 bytes ≈ 16 MB.
  request.set_max_result_bytes(1 << 20);
  absl::StatusOr<ToolResult> capped = provider_->Invoke(request, absl::InfiniteFuture());
  EXPECT_EQ(capped.status().code(), absl::StatusCode::kResourceExhausted);
  // Without context the same grep fits.
  *request.mutable_arguments() = *common::JsonToProtoStruct(Json{{"pattern", "match"}});
  absl::StatusOr<ToolResult> fits = provider_->Invoke(request, absl::InfiniteFuture());
  ASSERT_THAT(fits, IsOk());
  EXPECT_EQ(Ok(*fits)["matches"].size(), 400u);
  EXPECT_LT(fits->output().ByteSizeLong(), size_t{1} << 20);
}

TEST_F(FilesProviderTest, ReadPastTheCallsCapIsResourceExhausted) {
  Put("a.txt", std::string(5000, 'a'));
  v1::InvokeRequest request;
  request.set_call_id("call-1");
  request.set_tool("files.read");
  request.set_action("read");
  request.mutable_resource()->set_namespace_("files");
  request.mutable_resource()->add_path("a.txt");
  request.mutable_resource()->mutable_owner()->set_human_user_id("user-alice");
  request.mutable_context()->mutable_owner()->set_human_user_id("user-alice");
  request.set_max_result_bytes(4096);
  EXPECT_EQ(provider_->Invoke(request, absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kResourceExhausted);
}

// Issue 34 (observation 5): an owner's bytes and files are bounded; a write past either quota
// fails quota_exceeded and changes nothing; another owner is not affected; deleting frees space.
TEST_F(FilesProviderTest, OwnerQuotasBoundBytesAndFiles) {
  FilesProvider::Options options;
  options.max_owner_bytes = 1000;
  options.max_owner_files = 3;
  MakeProvider(options);
  Put("a.txt", std::string(600, 'a'));
  EXPECT_EQ(Code(Run("create", {"b.txt"}, {{"content", std::string(500, 'b')}})), "quota_exceeded");
  EXPECT_EQ(Code(Run("read", {"b.txt"})), "not_found");
  EXPECT_EQ(Code(Run("append", {"a.txt"}, {{"content", std::string(500, 'a')}})), "quota_exceeded");
  Put("b.txt", "b");
  Put("c.txt", "c");
  EXPECT_EQ(Code(Run("create", {"d.txt"}, {{"content", "d"}})), "quota_exceeded");
  // Snapshots count too.
  EXPECT_EQ(Code(Run("snapshot:create", {"a.txt"})), "quota_exceeded");
  // Bob has his own quota.
  Ok(Run("create", {"d.txt"}, {{"content", "d"}}, "user-bob"));
  Ok(Run("delete", {"a.txt"}));
  Put("d.txt", std::string(900, 'd'));
  EXPECT_NE(Run("read", {"a.txt"}).status(), protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED);
}

}  // namespace
}  // namespace sharedos::envelope::files
