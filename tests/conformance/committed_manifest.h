// What conformance_test and every cli_column_test_* check after their run, in one place: the
// columns they ran, with every other column's cells taken from the committed manifest, must
// rebuild docs/conformance/manifest.{json,md} exactly, and no cell of a run column may break the
// build.

#ifndef SHAREDOS_TESTS_CONFORMANCE_COMMITTED_MANIFEST_H_
#define SHAREDOS_TESTS_CONFORMANCE_COMMITTED_MANIFEST_H_

#include <map>
#include <string>
#include <vector>

#include "tests/conformance/suite.h"

namespace sharedos::conformance {

// The workspace root, where the runfile //:package.json links to (node_modules lives there);
// empty when it cannot be resolved.
std::string WorkspaceRoot();

// gtest assertions: `cells` holds the cells of `run_columns`; every other column of cases.json is
// filled from the committed manifest. The rebuilt manifest is written to
// TEST_UNDECLARED_OUTPUTS_DIR when set.
void ExpectTheCommittedManifest(const Declarations& declarations,
                                const std::vector<std::string>& run_columns,
                                std::map<std::string, std::vector<Cell>> cells);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_COMMITTED_MANIFEST_H_
