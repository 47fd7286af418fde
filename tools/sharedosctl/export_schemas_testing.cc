#include "tools/sharedosctl/export_schemas_testing.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "nlohmann/json.hpp"
#include "tests/testing/process.h"

namespace sharedos::sharedosctl::testing {
namespace {

class ValijsonSchema final : public ExportSchema {
 public:
  explicit ValijsonSchema(const nlohmann::json& document) {
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    parser.populateSchema(adapter, schema_);
  }

  std::string Violations(const std::string& line) const override {
    const nlohmann::json value = nlohmann::json::parse(line, nullptr, false);
    if (value.is_discarded()) return "not JSON";
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(value);
    if (validator.validate(schema_, adapter, &results)) return "";
    std::string text;
    valijson::ValidationResults::Error error;
    for (int i = 0; i < 6 && results.popError(error); ++i) {
      std::string where;
      for (const std::string& step : error.context) where += step;
      text += where + ": " + error.description + "\n";
    }
    return text.empty() ? "invalid" : text;
  }

 private:
  valijson::Schema schema_;
};

}  // namespace

std::unique_ptr<ExportSchema> ExportSchema::Load(const std::string& file_name) {
  std::ifstream in(::sharedos::testing::RunfilePath("docs/schemas/" + file_name));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json document = nlohmann::json::parse(text.str(), nullptr, false);
  if (document.is_discarded()) {
    std::cerr << "docs/schemas/" << file_name << " is missing or not JSON\n";
    std::abort();
  }
  return std::make_unique<ValijsonSchema>(document);
}

}  // namespace sharedos::sharedosctl::testing
