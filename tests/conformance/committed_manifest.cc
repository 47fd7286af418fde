#include "tests/conformance/committed_manifest.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
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

// Where `committed` and `rebuilt` differ, bounded for the test log: the lines between their common
// head and common tail, at most kShown of each (the two files are ~0.5 MB; printing both whole
// hid the difference behind the log's size limit). Empty when they are equal.
std::string Difference(absl::string_view committed, absl::string_view rebuilt) {
  if (committed == rebuilt) return "";
  constexpr size_t kShown = 30;
  const std::vector<absl::string_view> before = absl::StrSplit(committed, '\n');
  const std::vector<absl::string_view> after = absl::StrSplit(rebuilt, '\n');
  size_t head = 0;
  while (head < before.size() && head < after.size() && before[head] == after[head]) ++head;
  size_t tail = 0;
  while (tail < before.size() - head && tail < after.size() - head &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail]) {
    ++tail;
  }
  std::string out =
      absl::StrCat("first difference at line ", head + 1, ": ", before.size() - head - tail,
                   " committed line(s) became ", after.size() - head - tail, " rebuilt line(s)\n");
  const auto show = [&](const std::vector<absl::string_view>& lines, absl::string_view mark) {
    const size_t end = lines.size() - tail;
    for (size_t i = head; i < end && i < head + kShown; ++i) {
      absl::StrAppend(&out, mark, " ", i + 1, ": ", lines[i], "\n");
    }
    if (end > head + kShown) absl::StrAppend(&out, mark, " … ", end - head - kShown, " more\n");
  };
  show(before, "-");
  show(after, "+");
  return out;
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
  EXPECT_EQ(Difference(committed_json, manifest.json.dump(2) + "\n"), "")
      << kManifestJsonPath << kRegenerate;
  EXPECT_EQ(Difference(ReadFile(testing::RunfilePath(kManifestMdPath)), manifest.markdown), "")
      << kManifestMdPath << kRegenerate;
}

}  // namespace sharedos::conformance
