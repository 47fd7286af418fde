#include "tests/conformance/committed_manifest.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

constexpr char kRegenerate[] =
    "\nThe committed manifest differs from this run. Regenerate it with\n"
    "  bazel run //tests/conformance:update_manifest\n"
    "and commit docs/conformance/manifest.{json,md}.";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace

std::string WorkspaceRoot() {
  char resolved[PATH_MAX];
  const std::string link = testing::RunfilePath("package.json");
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string path = resolved;
  return path.substr(0, path.rfind('/'));
}

void ExpectTheCommittedManifest(const Declarations& declarations,
                                const std::vector<std::string>& run_columns,
                                std::map<std::string, std::vector<Cell>> cells) {
  std::map<std::string, std::vector<Cell>> run_cells;
  for (const std::string& column : run_columns) run_cells[column] = cells[column];
  const std::vector<std::string> breakers = BuildBreakers(declarations, run_cells);
  EXPECT_THAT(breakers, ::testing::IsEmpty()) << absl::StrJoin(breakers, "\n");

  const std::string committed_json = ReadFile(testing::RunfilePath(kManifestJsonPath));
  const nlohmann::json committed =
      nlohmann::json::parse(committed_json, nullptr, /*allow_exceptions=*/false);
  for (const std::string column : declarations.cases["columns"]) {
    if (std::find(run_columns.begin(), run_columns.end(), column) != run_columns.end()) continue;
    absl::StatusOr<std::vector<Cell>> kept =
        committed.is_discarded() ? absl::NotFoundError("manifest.json is not JSON")
                                 : CellsFromManifest(declarations, committed, column);
    ASSERT_TRUE(kept.ok()) << kept.status() << kRegenerate;
    cells[column] = *std::move(kept);
  }
  const Manifest manifest = BuildManifest(declarations, cells);

  // The run's manifest, for regeneration by hand or inspection.
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    ASSERT_TRUE(
        testing::WriteFile(std::string(outputs) + "/manifest.json", manifest.json.dump(2) + "\n")
            .ok());
    ASSERT_TRUE(testing::WriteFile(std::string(outputs) + "/manifest.md", manifest.markdown).ok());
  }
  EXPECT_EQ(committed_json, manifest.json.dump(2) + "\n") << kRegenerate;
  EXPECT_EQ(ReadFile(testing::RunfilePath(kManifestMdPath)), manifest.markdown) << kRegenerate;
}

}  // namespace sharedos::conformance
