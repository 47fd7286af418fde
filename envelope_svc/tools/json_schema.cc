// valijson reports a schema it cannot compile by throwing (VALIJSON_USE_EXCEPTIONS, set in
// BUILD; without it valijson aborts the process). The exceptions stop here.
#include "envelope_svc/tools/json_schema.h"

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/optional.h"
#include "common/status/status_macros.h"

#if !VALIJSON_USE_EXCEPTIONS
#error "valijson must be built with VALIJSON_USE_EXCEPTIONS=1 (else a bad schema aborts)"
#endif

namespace sharedos::envelope::tools {
namespace {

// How many violations a validation error lists.
constexpr size_t kMaxReportedErrors = 4;

// Bounds on `$ref`s (CheckRefChain): hops from one $ref to the schema it names, and its length.
constexpr int kMaxRefHops = 32;
constexpr size_t kMaxRefBytes = 1024;

bool IsRegexFormat(const nlohmann::json& value) {
  return value == "date" || value == "time" || value == "date-time";
}

// Whether valijson would use std::regex for `schema`; fails for an over-long pattern.
// Conservative: a property *named* "pattern" counts too.
absl::StatusOr<bool> UsesStdRegex(const nlohmann::json& schema, int depth = 0) {
  if (depth > 128) return absl::InvalidArgumentError("nested too deeply");
  bool uses = false;
  if (schema.is_object()) {
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      if (it.key() == "pattern" && it->is_string()) {
        uses = true;
        if (it->get_ref<const std::string&>().size() > JsonSchema::kMaxSchemaPatternBytes) {
          return absl::InvalidArgumentError(absl::StrCat(
              "a pattern is longer than ", JsonSchema::kMaxSchemaPatternBytes, " bytes"));
        }
      }
      if (it.key() == "patternProperties") {
        uses = true;
        if (it->is_object()) {
          for (auto p = it->begin(); p != it->end(); ++p) {
            if (p.key().size() > JsonSchema::kMaxSchemaPatternBytes) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "a pattern is longer than ", JsonSchema::kMaxSchemaPatternBytes, " bytes"));
            }
          }
        }
      }
      if (it.key() == "format" && IsRegexFormat(*it)) uses = true;
      absl::StatusOr<bool> nested = UsesStdRegex(*it, depth + 1);
      if (!nested.ok()) return nested.status();
      uses = uses || *nested;
    }
  } else if (schema.is_array()) {
    for (const nlohmann::json& item : schema) {
      absl::StatusOr<bool> nested = UsesStdRegex(item, depth + 1);
      if (!nested.ok()) return nested.status();
      uses = uses || *nested;
    }
  }
  return uses;
}

// The JSON pointer of the first string or key longer than `max_bytes`; nullopt when none is.
absl::optional<std::string> FirstLongString(const nlohmann::json& value, size_t max_bytes,
                                            const std::string& pointer) {
  if (value.is_string()) {
    if (value.get_ref<const std::string&>().size() > max_bytes) return pointer;
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string child = absl::StrCat(pointer, "[", it.key().substr(0, 64), "]");
      if (it.key().size() > max_bytes) return child;
      absl::optional<std::string> found = FirstLongString(*it, max_bytes, child);
      if (found.has_value()) return found;
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      absl::optional<std::string> found =
          FirstLongString(value[i], max_bytes, absl::StrCat(pointer, "[", i, "]"));
      if (found.has_value()) return found;
    }
  }
  return absl::nullopt;
}

using Adapter = valijson::adapters::NlohmannJsonAdapter;

// valijson resolves a `$ref` whose target is itself a `$ref` by recursing, with no cycle check
// ("TODO: Need to detect degenerate circular references"), so {"$ref": "#"} overflowed the stack
// and ended the process (found by json_schema_fuzzer); its JSON-pointer walk also recurses once
// per token, empty ones included. Follows the chain from `node` as valijson would and refuses one
// longer than kMaxRefHops (every cycle is). Stops where valijson would throw (a remote document,
// an unresolvable pointer, a non-string $ref), which Compile then reports.
absl::Status CheckRefChain(const Adapter& root, const Adapter& start) {
  std::optional<Adapter> node(start);
  for (int hops = 0;; ++hops) {
    if (!node->isObject()) return absl::OkStatus();
    const Adapter::Object object = node->getObject();
    const auto it = object.find("$ref");
    std::string ref;
    if (it == object.end() || !it->second.getString(ref)) return absl::OkStatus();
    if (ref.size() > kMaxRefBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("a $ref is longer than ", kMaxRefBytes, " bytes"));
    }
    if (hops == kMaxRefHops) {
      return absl::InvalidArgumentError(
          absl::StrCat("a $ref chain is circular or longer than ", kMaxRefHops));
    }
    const auto uri = valijson::internal::json_reference::getJsonReferenceUri(ref);
    if (uri &&
        (valijson::internal::uri::isUriAbsolute(*uri) || valijson::internal::uri::isUrn(*uri))) {
      return absl::OkStatus();
    }
    const auto pointer = valijson::internal::json_reference::getJsonReferencePointer(ref);
    std::string path = pointer ? *pointer : "";
    path.erase(path.find_last_not_of('/') + 1);
    try {
      node.emplace(valijson::internal::json_pointer::resolveJsonPointer(root, path));
    } catch (const std::exception&) {
      return absl::OkStatus();
    }
  }
}

// CheckRefChain from every object of `schema` that holds a $ref. `depth` is bounded by the
// caller (UsesStdRegex refuses deeper schemas first).
absl::Status CheckRefChains(const Adapter& root, const nlohmann::json& schema) {
  if (schema.is_object()) {
    if (schema.contains("$ref")) RETURN_IF_ERROR(CheckRefChain(root, Adapter(schema)));
    for (const nlohmann::json& child : schema) RETURN_IF_ERROR(CheckRefChains(root, child));
  } else if (schema.is_array()) {
    for (const nlohmann::json& child : schema) RETURN_IF_ERROR(CheckRefChains(root, child));
  }
  return absl::OkStatus();
}

}  // namespace

JsonSchema::JsonSchema(std::unique_ptr<valijson::Schema> schema, bool uses_std_regex)
    : schema_(std::move(schema)), uses_std_regex_(uses_std_regex) {}

JsonSchema::~JsonSchema() = default;

absl::StatusOr<std::shared_ptr<const JsonSchema>> JsonSchema::Compile(
    const nlohmann::json& schema) {
  if (!schema.is_object()) return absl::InvalidArgumentError("not a JSON object");
  absl::StatusOr<bool> uses_std_regex = UsesStdRegex(schema);
  if (!uses_std_regex.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a usable JSON Schema: ", uses_std_regex.status().message()));
  }
  absl::Status refs = absl::OkStatus();
  try {
    refs = CheckRefChains(Adapter(schema), schema);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid JSON Schema: ", e.what()));
  }
  if (!refs.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a usable JSON Schema: ", refs.message()));
  }
  auto compiled = std::make_unique<valijson::Schema>();
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(schema);
    parser.populateSchema(adapter, *compiled);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid JSON Schema: ", e.what()));
  }
  return std::shared_ptr<const JsonSchema>(new JsonSchema(std::move(compiled), *uses_std_regex));
}

absl::Status JsonSchema::Validate(const nlohmann::json& value) const {
  if (uses_std_regex_) {
    absl::optional<std::string> long_string =
        FirstLongString(value, kMaxRegexCheckedBytes, "<root>");
    if (long_string.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(*long_string, ": longer than ", kMaxRegexCheckedBytes,
                       " bytes, the limit under a schema with patterns or date/time formats"));
    }
  }
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(value);
  bool valid = false;
  try {
    valid = validator.validate(*schema_, adapter, &results);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("validation failed: ", e.what()));
  }
  if (valid) return absl::OkStatus();
  std::vector<std::string> errors;
  valijson::ValidationResults::Error error;
  while (errors.size() < kMaxReportedErrors && results.popError(error)) {
    errors.push_back(absl::StrCat(absl::StrJoin(error.context, ""), ": ", error.description));
  }
  if (errors.empty()) errors.push_back("<root>: does not match the schema");
  return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
}

}  // namespace sharedos::envelope::tools
