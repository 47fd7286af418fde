// One CLI column of the conformance suite (issue 35), run as its own test so the five CLIs run
// in parallel: `--column=<claude-code|codex|gemini-cli|opencode|pi>`. The process first moves
// into a network namespace with loopback only (loopback_network.h), so the CLI, its scripted
// model and SharedOS can reach each other and nothing else. Fails on a breaking cell of the
// column and when the committed docs/conformance/manifest.{json,md} differ from the manifest
// rebuilt with this column rerun (every other column as committed).
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/loopback_network.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

std::string g_column;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string WorkspaceRoot() {
  char resolved[PATH_MAX];
  const std::string link = testing::RunfilePath("package.json");
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  return path.substr(0, path.rfind('/'));
}

TEST(CliColumnTest, EveryRunCellPassesAndTheManifestIsCurrent) {
  ASSERT_FALSE(g_column.empty()) << "--column=<id> is required";
  absl::StatusOr<Declarations> declarations = LoadDeclarations();
  ASSERT_TRUE(declarations.ok()) << declarations.status();
  const nlohmann::json committed =
      nlohmann::json::parse(ReadFile(testing::RunfilePath(kManifestJsonPath)), nullptr, false);
  ASSERT_FALSE(committed.is_discarded());

  SuiteOptions options;
  options.scratch = testing::TempPath("cli-column");
  ASSERT_EQ(mkdir(options.scratch.c_str(), 0700), 0);
  options.node_root = WorkspaceRoot();
  options.columns = {g_column};
  const absl::Time started = absl::Now();
  auto cells = RunSuite(*declarations, options);
  std::cout << "column " << g_column << ": " << absl::ToDoubleSeconds(absl::Now() - started)
            << " s\n";
  // Each cell of the column, for the test log.
  for (size_t i = 0; i < cells[g_column].size(); ++i) {
    const Cell& cell = cells[g_column][i];
    if (cell.status == "not run" || cell.status == "not applicable") continue;
    std::cout << "row " << declarations->cases["rows"][i]["row"] << ": " << cell.status << " "
              << cell.attempted << "/" << cell.declared << " " << cell.detail << "\n";
    for (const Cell::Observation& observation : cell.observed) {
      std::cout << "    " << observation.step << ": " << observation.observed << "\n";
    }
  }
  const std::vector<std::string> breakers = BuildBreakers(*declarations, cells);
  EXPECT_THAT(breakers, ::testing::IsEmpty()) << absl::StrJoin(breakers, "\n");

  for (const std::string column : declarations->cases["columns"]) {
    if (column == g_column) continue;
    absl::StatusOr<std::vector<Cell>> kept = CellsFromManifest(*declarations, committed, column);
    ASSERT_TRUE(kept.ok()) << kept.status()
                           << " (regenerate: bazel run "
                              "//tests/conformance:update_manifest)";
    cells[column] = *std::move(kept);
  }
  const Manifest manifest = BuildManifest(*declarations, cells);
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    (void)testing::WriteFile(std::string(outputs) + "/manifest.json", manifest.json.dump(2) + "\n");
    (void)testing::WriteFile(std::string(outputs) + "/manifest.md", manifest.markdown);
  }
  const std::string how =
      "\nThe committed manifest differs from this run. Regenerate it with\n"
      "  bazel run //tests/conformance:update_manifest\n";
  EXPECT_EQ(ReadFile(testing::RunfilePath(kManifestJsonPath)), manifest.json.dump(2) + "\n") << how;
  EXPECT_EQ(ReadFile(testing::RunfilePath(kManifestMdPath)), manifest.markdown) << how;
}

}  // namespace
}  // namespace sharedos::conformance

int main(int argc, char** argv) {
  // Before any thread: every process of the run inherits the namespace.
  const absl::Status isolated = sharedos::conformance::EnterLoopbackOnlyNetwork();
  if (!isolated.ok()) {
    std::cerr << "cli_column_test: " << isolated << "\n";
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (absl::StartsWith(argv[i], "--column=")) sharedos::conformance::g_column = argv[i] + 9;
  }
  return RUN_ALL_TESTS();
}
