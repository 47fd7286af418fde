// Test support: the export schemas (docs/schemas/) loaded from the runfiles, and a validator of
// one exported line against them (valijson, draft-07).
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_SCHEMAS_TESTING_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_SCHEMAS_TESTING_H_

#include <memory>
#include <string>

namespace sharedos::sharedosctl::testing {

// One schema file, compiled once. Not thread-safe.
class ExportSchema {
 public:
  // "audit-export-v1.schema.json" or "audit-export-ocsf-v1.schema.json". Aborts the test binary
  // when the file is missing or does not compile.
  static std::unique_ptr<ExportSchema> Load(const std::string& file_name);
  virtual ~ExportSchema() = default;
  // "" when `line` is JSON valid against the schema; else what failed (first few violations).
  virtual std::string Violations(const std::string& line) const = 0;
};

}  // namespace sharedos::sharedosctl::testing

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_SCHEMAS_TESTING_H_
