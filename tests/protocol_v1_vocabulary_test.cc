// Protocol "1" uses only the reference's vocabulary (docs/adr/0008): every AuditEventType is one
// of semantics §1.15's eleven and the six retired numbers stay reserved; every reason code the
// catalogue (capability/reason_codes.h) names is in semantics §5.2/§6 or in the short, reasoned
// list of SharedOS-only codes; the checked-in excerpt is the semantics' own text.

#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capability/reason_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "tests/testing/process.h"
#include "tests/testing/reference_vocabulary.h"

namespace sharedos::testing {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ReferenceVocabulary Vocabulary() {
  absl::StatusOr<ReferenceVocabulary> vocabulary = LoadReferenceVocabulary();
  EXPECT_TRUE(vocabulary.ok()) << vocabulary.status();
  return vocabulary.ok() ? *vocabulary : ReferenceVocabulary();
}

TEST(ProtocolV1VocabularyTest, EveryAuditEventTypeIsOneOfTheReferenceEleven) {
  const ReferenceVocabulary vocabulary = Vocabulary();
  ASSERT_THAT(vocabulary.event_types, SizeIs(11));
  std::set<std::string> reference;
  for (const std::string& name : vocabulary.event_types) reference.insert(EventTypeEnumName(name));
  std::set<std::string> ours;
  const auto* descriptor = pb::AuditEventType_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    if (descriptor->value(i)->number() == 0) continue;
    ours.insert(descriptor->value(i)->name());
  }
  EXPECT_EQ(ours, reference);
}

TEST(ProtocolV1VocabularyTest, TheRetiredControlPlaneNumbersAndNamesStayReserved) {
  const auto* descriptor = pb::AuditEventType_descriptor();
  for (int number = 12; number <= 17; ++number) {
    EXPECT_TRUE(descriptor->IsReservedNumber(number)) << number;
  }
  for (const char* name :
       {"AUDIT_EVENT_TYPE_GRANT_ISSUED", "AUDIT_EVENT_TYPE_GRANT_DERIVED",
        "AUDIT_EVENT_TYPE_GRANT_REVOKED", "AUDIT_EVENT_TYPE_HOST_POLICY_UPDATED",
        "AUDIT_EVENT_TYPE_ESCALATION_RECORDED", "AUDIT_EVENT_TYPE_ESCALATION_RESOLVED"}) {
    EXPECT_TRUE(descriptor->IsReservedName(name)) << name;
  }
}

// Every code the catalogue defines: its string constants (read from the header's text, so a new
// one is checked without editing this test) and the Name() of the enums whose names reach "1"
// records (decision codes, authority and delegation codes in reason / metadata).
std::set<std::string> CatalogueCodes() {
  std::set<std::string> codes;
  const std::string header = ReadFile(RunfilePath("capability/reason_codes.h"));
  EXPECT_FALSE(header.empty()) << "capability/reason_codes.h is not a runfile";
  for (size_t at = header.find("= \""); at != std::string::npos; at = header.find("= \"", at)) {
    at += 3;
    codes.insert(header.substr(at, header.find('"', at) - at));
  }
  for (int i = 0;; ++i) {
    const absl::string_view name = capability::Name(static_cast<capability::ReasonCode>(i));
    if (name == "unknown" || i > 64) break;
    codes.insert(std::string(name));
  }
  for (int i = 0;; ++i) {
    const absl::string_view name = capability::Name(static_cast<capability::AuthorityCode>(i));
    if (name == "unknown" || i > 64) break;
    codes.insert(std::string(name));
  }
  for (int i = 0;; ++i) {
    const absl::string_view name = capability::Name(static_cast<capability::DelegationCode>(i));
    if (name == "unknown" || i > 64) break;
    codes.insert(std::string(name));
  }
  return codes;
}

TEST(ProtocolV1VocabularyTest, EveryCatalogueCodeIsTheReferencesOrAReasonedLocalOne) {
  const ReferenceVocabulary vocabulary = Vocabulary();
  ASSERT_FALSE(vocabulary.codes.empty());
  const std::set<std::string> codes = CatalogueCodes();
  ASSERT_GT(codes.size(), 40u);  // the header was read and parsed
  std::set<std::string> local;
  for (const LocalCode& code : LocalCodes()) local.insert(code.code);
  std::vector<std::string> unknown;
  for (const std::string& code : codes) {
    if (vocabulary.codes.count(code) == 0 && local.count(code) == 0) unknown.push_back(code);
  }
  EXPECT_THAT(unknown, IsEmpty()) << "codes stamped under \"1\" that the reference does not list";
  // A local code the reference lists is no longer local: the list only shrinks.
  for (const std::string& code : local) EXPECT_EQ(vocabulary.codes.count(code), 0u) << code;
}

TEST(ProtocolV1VocabularyTest, TheStrictReaderRefusesWhatA1ReaderWould) {
  const ReferenceVocabulary vocabulary = Vocabulary();
  pb::AuditEvent event;
  event.set_version("1");
  event.set_id("e1");
  event.set_type(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(pb::AUDIT_OUTCOME_DENIED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("t");
  event.set_namespace_id("w");
  event.mutable_actor()->set_agent_id("a");
  event.mutable_authority()->set_human_user_id("o");
  event.mutable_owner()->set_human_user_id("o");
  event.set_purpose("p");
  event.set_reason("no_matching_grant");
  EXPECT_THAT(StrictReaderFindings(vocabulary, event), IsEmpty());

  pb::AuditEvent retired = event;
  retired.set_type(static_cast<pb::AuditEventType>(12));              // was grant.issued
  EXPECT_THAT(StrictReaderFindings(vocabulary, retired), SizeIs(2));  // validation and type

  pb::AuditEvent invented = event;
  invented.set_cause("made_up_cause");
  EXPECT_THAT(StrictReaderFindings(vocabulary, invented), SizeIs(1));

  audit::v1::AuditRecord control_plane;
  control_plane.mutable_control_plane()->set_id("c1");
  EXPECT_THAT(StrictReaderFindings(vocabulary, control_plane), IsEmpty());
  EXPECT_THAT(StrictReaderFindings(vocabulary, audit::v1::AuditRecord()), SizeIs(1));
}

// The workspace's ../shared/spec/semantics.md, found through the runfile symlink of a source
// file (as //proto:buf_breaking_test finds node_modules); empty when it is not there.
std::string ReferenceSemanticsPath() {
  const std::string link = RunfilePath("tests/testdata/reference_semantics_excerpt.md");
  char* resolved = realpath(link.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string workspace(resolved);
  free(resolved);
  const size_t at = workspace.rfind("/tests/testdata/");
  if (at == std::string::npos) return "";
  workspace.resize(at);
  const std::string path = workspace + "/../shared/spec/semantics.md";
  return std::ifstream(path).good() ? path : "";
}

TEST(ProtocolV1VocabularyTest, TheExcerptIsTheSemanticsOwnText) {
  const std::string excerpt =
      ReadFile(RunfilePath("tests/testdata/reference_semantics_excerpt.md"));
  ASSERT_FALSE(excerpt.empty());
  const std::string semantics_path = ReferenceSemanticsPath();
  if (semantics_path.empty()) {
    GTEST_SKIP() << "../shared/spec/semantics.md is not beside this workspace; the checked-in "
                    "excerpt is used as it is";
  }
  EXPECT_EQ(excerpt, SemanticsExcerpt(ReadFile(semantics_path)))
      << "tests/testdata/reference_semantics_excerpt.md differs from " << semantics_path
      << ": re-cut it (SemanticsExcerpt) and review what the reference changed";
}

}  // namespace
}  // namespace sharedos::testing
