// Fuzzes JSON Schema validation of tool arguments (json_schema.h): a schema (from a registry or a
// host provider's listed definition) and the arguments checked against it. The input is the
// schema's JSON text, a NUL, then the value's JSON text; both pass the nesting bound first, as
// every JSON entering SharedOS does. Properties: nothing crashes (valijson's std::regex included:
// JsonSchema bounds what it matches); a refusal is INVALID_ARGUMENT; validation is deterministic.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/json/json_nesting.h"
#include "envelope_svc/tools/json_schema.h"

namespace {

bool Parse(absl::string_view text, nlohmann::json* out) {
  if (!sharedos::common::CheckJsonNesting(text, "fuzz").ok()) return false;
  *out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !out->is_discarded();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::sharedos::envelope::tools::JsonSchema;
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == absl::string_view::npos) return 0;
  nlohmann::json schema_json;
  nlohmann::json value;
  if (!Parse(input.substr(0, nul), &schema_json) || !Parse(input.substr(nul + 1), &value)) {
    return 0;
  }
  auto schema = JsonSchema::Compile(schema_json);
  if (!schema.ok()) {
    if (schema.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  const absl::Status first = (*schema)->Validate(value);
  if (!first.ok() && first.code() != absl::StatusCode::kInvalidArgument) std::abort();
  if ((*schema)->Validate(value).ok() != first.ok()) std::abort();
  return 0;
}
