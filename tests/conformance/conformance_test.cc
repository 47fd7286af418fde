// The conformance suite in CI: every row on every column (kernel in-process, grpc against the
// four services as processes, the two official MCP clients against the MCP front door). Fails on
// any `fail` or `not exercised` cell, on `not implemented` without a named capability, and when
// the committed docs/conformance/manifest.{json,md} differ from this run (grades or hashes).
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/conformance/committed_manifest.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

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
  ExpectTheCommittedManifest(*declarations, options.columns, RunSuite(*declarations, options));
}

}  // namespace
}  // namespace sharedos::conformance
