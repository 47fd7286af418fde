// The conformance suite in CI: every row on every column (kernel in-process, grpc against the
// four services as processes, the two official MCP clients against the MCP front door). Fails on
// any `fail` or `not exercised` cell, on `not implemented` without a named capability, and when
// the committed docs/conformance/manifest.{json,md} differ from this run (grades or hashes).
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// The workspace root: where the runfile //:package.json links to (node_modules lives there).
std::string WorkspaceRoot() {
  char resolved[PATH_MAX];
  const std::string link = testing::RunfilePath("package.json");
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  return path.substr(0, path.rfind('/'));
}

TEST(ConformanceTest, EveryCellPassesAndTheManifestIsCurrent) {
  absl::StatusOr<Declarations> declarations = LoadDeclarations();
  ASSERT_TRUE(declarations.ok()) << declarations.status();
  SuiteOptions options;
  options.scratch = testing::TempPath("conformance");
  ASSERT_EQ(mkdir(options.scratch.c_str(), 0700), 0);
  options.node_root = WorkspaceRoot();
  // The CLI columns run in their own tests (cli_column_test_*, in parallel, each in a network
  // namespace); here their cells are the committed ones.
  const nlohmann::json cli_columns = declarations->cases.value("cliColumns", nlohmann::json());
  const std::vector<std::string> cli = cli_columns.value("columns", std::vector<std::string>());
  for (const std::string column : declarations->cases["columns"]) {
    if (std::find(cli.begin(), cli.end(), column) == cli.end()) options.columns.push_back(column);
  }
  auto cells = RunSuite(*declarations, options);
  const nlohmann::json committed = nlohmann::json::parse(
      ReadFile(testing::RunfilePath(kManifestJsonPath)), nullptr, /*allow_exceptions=*/false);
  for (const std::string& column : cli) {
    absl::StatusOr<std::vector<Cell>> kept =
        committed.is_discarded() ? absl::NotFoundError("manifest.json is not JSON")
                                 : CellsFromManifest(*declarations, committed, column);
    ASSERT_TRUE(kept.ok()) << kept.status();
    cells[column] = *std::move(kept);
  }
  const Manifest manifest = BuildManifest(*declarations, cells);

  // The run's manifest, for regeneration by hand or inspection.
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    ASSERT_TRUE(
        testing::WriteFile(std::string(outputs) + "/manifest.json", manifest.json.dump(2) + "\n")
            .ok());
    ASSERT_TRUE(testing::WriteFile(std::string(outputs) + "/manifest.md", manifest.markdown).ok());
  }

  std::map<std::string, std::vector<Cell>> run_cells;
  for (const std::string& column : options.columns) run_cells[column] = cells[column];
  const std::vector<std::string> breakers = BuildBreakers(*declarations, run_cells);
  EXPECT_THAT(breakers, ::testing::IsEmpty()) << absl::StrJoin(breakers, "\n");

  const std::string how =
      "\nThe committed manifest differs from this run. Regenerate it with\n"
      "  bazel run //tests/conformance:update_manifest\n"
      "and commit docs/conformance/manifest.{json,md}.";
  EXPECT_EQ(ReadFile(testing::RunfilePath(kManifestJsonPath)), manifest.json.dump(2) + "\n") << how;
  EXPECT_EQ(ReadFile(testing::RunfilePath(kManifestMdPath)), manifest.markdown) << how;
}

}  // namespace
}  // namespace sharedos::conformance
