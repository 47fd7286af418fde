// Fuzzes the JSON entry path: the nesting bound, nlohmann's parser, and the canonical writers.
// Properties: nothing crashes; text accepted by StrictCanonicalJson reparses to a value whose
// canonical text is the same (canonical JSON is a fixed point), and CanonicalJson agrees with it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/string_view.h"
#include "common/json/canonical_json.h"
#include "common/json/json_nesting.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (!sharedos::common::CheckJsonNesting(text, "input").ok()) return 0;
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return 0;
  std::string lenient = sharedos::common::CanonicalJson(value);
  auto strict = sharedos::common::StrictCanonicalJson(value);
  if (!strict.ok()) return 0;
  if (*strict != lenient) std::abort();
  nlohmann::json again = nlohmann::json::parse(*strict, nullptr, /*allow_exceptions=*/false);
  if (again.is_discarded()) std::abort();
  auto twice = sharedos::common::StrictCanonicalJson(again);
  if (!twice.ok() || *twice != *strict) std::abort();
  return 0;
}
