// bazel run //tests/conformance:update_manifest [-- --columns=<id>[,<id>…]]
// Reruns the conformance suite and rewrites docs/conformance/manifest.{json,md} in the
// workspace (BUILD_WORKSPACE_DIRECTORY). Prints the cells that would fail the build.
// --columns: reruns only those columns (cases.json ids, e.g. opencode); every other column keeps
// its cells from the committed manifest.json (as the column tests rebuild it).
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

int main(int argc, char** argv) {
  namespace conformance = ::sharedos::conformance;
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::fprintf(stderr, "update_manifest: run it with `bazel run`\n");
    return 2;
  }
  auto declarations = conformance::LoadDeclarations(argv[0]);
  if (!declarations.ok()) {
    std::fprintf(stderr, "update_manifest: %s\n", declarations.status().ToString().c_str());
    return 2;
  }
  conformance::SuiteOptions options;
  options.node_root = workspace;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!absl::StartsWith(arg, "--columns=")) {
      std::fprintf(stderr, "update_manifest: unknown argument %s (--columns=<id>,…)\n", argv[i]);
      return 2;
    }
    for (absl::string_view column : absl::StrSplit(arg.substr(10), ',', absl::SkipEmpty())) {
      const auto& all = declarations->cases["columns"];
      if (std::find(all.begin(), all.end(), std::string(column)) == all.end()) {
        std::fprintf(stderr, "update_manifest: --columns: %s is not a column of cases.json\n",
                     std::string(column).c_str());
        return 2;
      }
      options.columns.emplace_back(column);
    }
  }
  char scratch[] = "/tmp/sharedos-conformance-XXXXXX";
  if (mkdtemp(scratch) == nullptr) return 2;
  options.scratch = scratch;
  auto cells = conformance::RunSuite(*declarations, options);
  const std::string root = workspace;
  if (!options.columns.empty()) {
    // Every column not rerun, as committed.
    std::ifstream in(root + "/" + conformance::kManifestJsonPath, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json committed = nlohmann::json::parse(text.str(), nullptr, false);
    for (const std::string column : declarations->cases["columns"]) {
      if (cells.count(column) > 0) continue;
      auto kept = committed.is_discarded()
                      ? absl::StatusOr<std::vector<conformance::Cell>>(
                            absl::NotFoundError("manifest.json is not JSON"))
                      : conformance::CellsFromManifest(*declarations, committed, column);
      if (!kept.ok()) {
        std::fprintf(stderr, "update_manifest: the committed column %s: %s\n", column.c_str(),
                     kept.status().ToString().c_str());
        return 1;
      }
      cells[column] = *std::move(kept);
    }
  }
  const conformance::Manifest manifest = conformance::BuildManifest(*declarations, cells);
  if (!sharedos::testing::WriteFile(root + "/" + conformance::kManifestJsonPath,
                                    manifest.json.dump(2) + "\n")
           .ok() ||
      !sharedos::testing::WriteFile(root + "/" + conformance::kManifestMdPath, manifest.markdown)
           .ok()) {
    std::fprintf(stderr, "update_manifest: cannot write docs/conformance\n");
    return 1;
  }
  std::printf("update_manifest: wrote %s and %s (case set %s, world set %s)\n",
              conformance::kManifestJsonPath, conformance::kManifestMdPath,
              declarations->case_set_hash.c_str(), declarations->world_set_hash.c_str());
  for (const std::string& breaker : conformance::BuildBreakers(*declarations, cells)) {
    std::printf("update_manifest: breaks the build: %s\n", breaker.c_str());
  }
  std::printf("update_manifest: scratch %s\n", scratch);
  return 0;
}
