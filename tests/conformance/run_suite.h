// Runs the whole suite: each column on its own fresh deployment and world.

#ifndef SHAREDOS_TESTS_CONFORMANCE_RUN_SUITE_H_
#define SHAREDOS_TESTS_CONFORMANCE_RUN_SUITE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/conformance/suite.h"

namespace sharedos::conformance {

struct SuiteOptions {
  // An existing writable directory (databases, workspaces, tokens per column).
  std::string scratch;
  // The columns to run (cases.json "columns" when empty).
  std::vector<std::string> columns;
  // Negative control: the kernel column's authorizer allows every decision.
  bool allow_everything = false;
  // Negative control: the kernel column's broker fails to list its tools.
  bool broker_listing_fails = false;
  // The workspace root holding node_modules and tests/conformance/mcp_driver.mjs (the MCP
  // columns); empty: the MCP columns are not run.
  std::string node_root;
  // The sharedosctl runfile the CLI columns take their recipes from (mcp-config).
  std::string sharedosctl = "tools/sharedosctl/sharedosctl";
};

// Column id → one cell per row. A column whose deployment cannot start is every runnable row
// `not exercised` with the reason.
std::map<std::string, std::vector<Cell>> RunSuite(const Declarations& declarations,
                                                  const SuiteOptions& options);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_RUN_SUITE_H_
