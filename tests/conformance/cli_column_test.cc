// One CLI column of the conformance suite (issue 35), run as its own test so the five CLIs run
// in parallel: `--column=<claude-code|codex|gemini-cli|opencode|pi>`. The process first moves
// into a network namespace with loopback only (loopback_network.h), so the CLI, its scripted
// model and SharedOS can reach each other and nothing else. Fails on a breaking cell of the
// column and when the committed docs/conformance/manifest.{json,md} differ from the manifest
// rebuilt with this column rerun (every other column as committed).
#include <sys/stat.h>

#include <iostream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/conformance/committed_manifest.h"
#include "tests/conformance/loopback_network.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

std::string g_column;

TEST(CliColumnTest, EveryRunCellPassesAndTheManifestIsCurrent) {
  ASSERT_FALSE(g_column.empty()) << "--column=<id> is required";
  absl::StatusOr<Declarations> declarations = LoadDeclarations();
  ASSERT_TRUE(declarations.ok()) << declarations.status();

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
  ExpectTheCommittedManifest(*declarations, options.columns, std::move(cells));
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
