// bazel run //tests/conformance:update_manifest
// Reruns the conformance suite and rewrites docs/conformance/manifest.{json,md} in the
// workspace (BUILD_WORKSPACE_DIRECTORY). Prints the cells that would fail the build.
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <string>

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
  char scratch[] = "/tmp/sharedos-conformance-XXXXXX";
  if (mkdtemp(scratch) == nullptr) return 2;
  conformance::SuiteOptions options;
  options.scratch = scratch;
  options.node_root = workspace;
  const auto cells = conformance::RunSuite(*declarations, options);
  const conformance::Manifest manifest = conformance::BuildManifest(*declarations, cells);
  const std::string root = workspace;
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
