// A JSON Schema (draft 7) compiled once by valijson and validated against many times.
// Immutable after Compile; Validate is thread-safe (each call uses its own validator).
//
// valijson checks `pattern`, `patternProperties` and the date/time formats with std::regex,
// whose matcher recurses once per input character: a 20,000-character argument against
// "^(a|b)*$" overflows an 8 MiB stack and kills the process. So a schema that uses any of them
// refuses, before valijson runs, any string or key longer than kMaxRegexCheckedBytes, and its
// own patterns are limited to kMaxSchemaPatternBytes.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_JSON_SCHEMA_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_JSON_SCHEMA_H_

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace valijson {
class Schema;
}  // namespace valijson

namespace sharedos::envelope::tools {

class JsonSchema {
 public:
  static constexpr size_t kMaxRegexCheckedBytes = 2048;
  static constexpr size_t kMaxSchemaPatternBytes = 1024;

  // Compiles `schema`, which must be a JSON object. Remote `$ref`s are never fetched.
  // Errors: INVALID_ARGUMENT "<problem>" when the schema is not an object or valijson rejects
  // it (an unknown type name, a malformed keyword, an unresolvable $ref, …).
  static absl::StatusOr<std::shared_ptr<const JsonSchema>> Compile(const nlohmann::json& schema);

  ~JsonSchema();
  JsonSchema(const JsonSchema&) = delete;
  JsonSchema& operator=(const JsonSchema&) = delete;

  // OK when `value` satisfies the schema.
  // Errors: INVALID_ARGUMENT listing the first violations as "<pointer>: <description>"; the
  // text may quote values and is meant for logs and tests only. A string or key over
  // kMaxRegexCheckedBytes in a value checked by a regex-using schema is such a violation.
  absl::Status Validate(const nlohmann::json& value) const;

 private:
  JsonSchema(std::unique_ptr<valijson::Schema> schema, bool uses_std_regex);

  std::unique_ptr<valijson::Schema> schema_;
  // Whether valijson will run std::regex on the validated value (see the class comment).
  bool uses_std_regex_;
};

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_JSON_SCHEMA_H_
