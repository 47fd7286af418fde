// Every code of the reason-code catalogue has an explanation: the test walks the catalogue —
// the string constants of capability/reason_codes.h (read from its text, so a code added there
// fails here until it is explained) and the Name() of each of its enums.
#include "grantstore_svc/client/explanations.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "capability/reason_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace sharedos::grantstore::client {
namespace {

namespace cap = ::sharedos::capability;

// The names of enum values 0, 1, … until Name() answers `stop` ("unknown", or "" for the
// dependency enum's first value, which names none).
template <typename Enum>
void AddNames(std::set<std::string>& codes, int first = 0) {
  for (int i = first; i < 64; ++i) {
    const absl::string_view name = cap::Name(static_cast<Enum>(i));
    if (name == "unknown" || name.empty()) break;
    codes.insert(std::string(name));
  }
}

std::set<std::string> Catalogue() {
  std::ifstream in(::sharedos::testing::RunfilePath("capability/reason_codes.h"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  std::set<std::string> codes;
  for (size_t at = header.find("= \""); at != std::string::npos; at = header.find("= \"", at)) {
    at += 3;
    codes.insert(header.substr(at, header.find('"', at) - at));
  }
  AddNames<cap::ReasonCode>(codes);
  AddNames<cap::RejectionReason>(codes);
  AddNames<cap::MissingDependency>(codes, /*first=*/1);
  AddNames<cap::DelegationCode>(codes);
  AddNames<cap::DeriveRefusal>(codes);
  AddNames<cap::AuthorityCode>(codes);
  return codes;
}

TEST(ExplanationsTest, EveryCodeOfTheCatalogueIsExplained) {
  const std::set<std::string> codes = Catalogue();
  ASSERT_GT(codes.size(), 80u);  // the header was read, the enums walked
  for (const std::string& code : codes) {
    const CodeExplanation* explanation = ExplainCode(code);
    ASSERT_NE(explanation, nullptr) << "no explanation for \"" << code << "\"";
    EXPECT_FALSE(explanation->meaning.empty()) << code;
    EXPECT_FALSE(explanation->next_step.empty()) << code;
  }
}

TEST(ExplanationsTest, EveryRejectionReasonSaysWhyTheGrantDidNotMatch) {
  for (int i = 0; i < 64; ++i) {
    const absl::string_view name = cap::Name(static_cast<cap::RejectionReason>(i));
    if (name == "unknown") break;
    ASSERT_NE(ExplainRejection(name), nullptr) << name;
  }
  EXPECT_EQ(ExplainCode("made_up_code"), nullptr);
}

}  // namespace
}  // namespace sharedos::grantstore::client
