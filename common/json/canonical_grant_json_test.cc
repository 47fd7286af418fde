// The direct canonical grant writer and the authority hash over it must stay byte-identical to
// the document path they replace (CanonicalJson(CapabilityGrantToJson(grant)), and
// sha256(canonicalJson(sorted texts)) of semantics §10.3): protocol "1" content hashes never
// change. Varied grants: every address kind, owners, scopes, every constraint, revocation,
// parents, metadata, non-ASCII text (where code-unit order and byte order differ), ill-formed
// UTF-8 and timestamps out of range.

#include <random>
#include <string>
#include <vector>

#include "common/json/canonical_json.h"
#include "common/json/code_unit_sort.h"
#include "common/json/hashes.h"
#include "common/json/protocol_json.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityGrant;

// The path the writer replaces.
absl::StatusOr<std::string> DocumentPath(const CapabilityGrant& grant) {
  absl::StatusOr<nlohmann::json> json = CapabilityGrantToJson(grant);
  if (!json.ok()) return json.status();
  return CanonicalJson(*json);
}

absl::StatusOr<std::string> DocumentAuthorityHash(const std::vector<CapabilityGrant>& grants) {
  std::vector<std::string> texts;
  for (const CapabilityGrant& grant : grants) {
    absl::StatusOr<std::string> text = DocumentPath(grant);
    if (!text.ok()) return text.status();
    texts.push_back(*text);
  }
  SortByCodeUnits(&texts);
  return Sha256HexOfCanonicalJson(nlohmann::json(texts));
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : random_(seed) {}

  int Below(int n) { return static_cast<int>(random_() % static_cast<uint32_t>(n)); }

  // ASCII mostly; sometimes quotes and controls, BMP text above U+E000, a supplementary
  // character (sorts before U+E000 by code unit, after it by byte), or ill-formed UTF-8.
  std::string Text() {
    static const char* const kParts[] = {
        "alice", "b",    "Z",        "a\"q",         "back\\slash",
        "tab\t", "\x01", "\xc3\xa9", "\xee\x80\x80", "\xf0\x9f\x98\x80",
        "\xff",  "/",    " ",        "projects",     "notes.md"};
    std::string text;
    const int parts = 1 + Below(3);
    for (int i = 0; i < parts; ++i) text += kParts[Below(ascii_only_ ? 2 : 15)];
    return text;
  }

  Address MakeAddress() {
    Address address;
    switch (Below(5)) {
      case 0:
        address.set_human_user_id(Text());
        break;
      case 1:
        address.set_agent_id(Text());
        break;
      case 2:
        address.set_group_conversation_id(Text());
        break;
      case 3:
        address.set_service_id(Text());
        break;
      default:
        break;  // No kind: {}.
    }
    return address;
  }

  google::protobuf::Timestamp Instant() {
    google::protobuf::Timestamp timestamp;
    timestamp.set_seconds(1767225600 + Below(100000));
    if (Below(2) == 0) timestamp.set_nanos(Below(1000) * 1000000 + Below(3) * 7);
    if (Below(40) == 0) timestamp.set_seconds(-99999999999999);  // Out of range: an error.
    return timestamp;
  }

  CapabilityGrant Grant() {
    CapabilityGrant grant;
    grant.set_id(Text());
    grant.set_namespace_id(Text());
    *grant.mutable_subject() = MakeAddress();
    *grant.mutable_issuer() = MakeAddress();
    const int capabilities = Below(4);
    for (int c = 0; c < capabilities; ++c) {
      auto* capability = grant.add_capabilities();
      capability->mutable_resource()->set_namespace_(Text());
      for (int p = Below(4); p > 0; --p) capability->mutable_resource()->add_path(Text());
      if (Below(3) == 0) *capability->mutable_resource()->mutable_owner() = MakeAddress();
      for (int a = Below(4); a > 0; --a) capability->add_actions(Text());
      capability->set_scope(static_cast<protocol::v1::Scope>(Below(3)));
    }
    if (Below(2) == 0) {
      auto* constraints = grant.mutable_constraints();
      for (int p = Below(3); p > 0; --p) constraints->add_purposes(Text());
      if (Below(2) == 0) *constraints->mutable_not_before() = Instant();
      if (Below(2) == 0) *constraints->mutable_expires_at() = Instant();
      if (Below(2) == 0) constraints->set_max_uses(Below(2) == 0 ? Below(10) : 9007199254740993);
      if (Below(2) == 0) constraints->set_delegation_depth(Below(5) - 1);
    }
    if (Below(4) != 0) *grant.mutable_issued_at() = Instant();
    if (Below(3) == 0) *grant.mutable_revoked_at() = Instant();
    if (Below(3) == 0) grant.set_parent_grant_id(Text());
    if (Below(3) == 0) {
      auto& fields = *grant.mutable_metadata()->mutable_fields();
      fields[Text()].set_string_value(Text());
      fields["n"].set_number_value(Below(2) == 0 ? 0.1 : 1e21);
      fields["b"].set_bool_value(true);
      fields["list"].mutable_list_value()->add_values()->set_null_value({});
      (*fields["nested"].mutable_struct_value()->mutable_fields())[Text()].set_number_value(-0.0);
    }
    return grant;
  }

  void set_ascii_only(bool ascii_only) { ascii_only_ = ascii_only; }

 private:
  std::mt19937 random_;
  bool ascii_only_ = false;
};

TEST(CanonicalGrantJsonTest, IsByteIdenticalToTheDocumentPathOnVariedGrants) {
  Generator generator(23);
  int compared = 0, errors = 0;
  for (int i = 0; i < 3000; ++i) {
    const CapabilityGrant grant = generator.Grant();
    const absl::StatusOr<std::string> expected = DocumentPath(grant);
    const absl::StatusOr<std::string> actual = CanonicalCapabilityGrantJson(grant);
    ASSERT_EQ(actual.ok(), expected.ok()) << grant.DebugString();
    if (expected.ok()) {
      ASSERT_EQ(*actual, *expected) << grant.DebugString();
      ++compared;
    } else {
      ASSERT_EQ(actual.status(), expected.status()) << grant.DebugString();
      ++errors;
    }
  }
  // Both outcomes were exercised, many times.
  EXPECT_GT(compared, 1000);
  EXPECT_GT(errors, 50);
}

TEST(CanonicalGrantJsonTest, AnEmptyGrantRendersEveryRequiredKey) {
  CapabilityGrant grant;
  grant.mutable_issued_at()->set_seconds(0);
  EXPECT_THAT(CanonicalCapabilityGrantJson(grant),
              IsOkAndHolds(std::string(R"({"capabilities":[],"constraints":{},"id":"",)"
                                       R"("issuedAt":"1970-01-01T00:00:00Z","issuer":{},)"
                                       R"("namespaceId":"","subject":{}})")));
  EXPECT_EQ(*CanonicalCapabilityGrantJson(grant), *DocumentPath(grant));
}

TEST(AuthorityHashTest, IsTheDocumentPathsHashOnVariedGrantSets) {
  for (const bool ascii_only : {true, false}) {
    Generator generator(ascii_only ? 5 : 6);
    generator.set_ascii_only(ascii_only);
    for (int set = 0; set < 60; ++set) {
      std::vector<CapabilityGrant> grants;
      for (int i = generator.Below(40); i > 0; --i) grants.push_back(generator.Grant());
      const absl::StatusOr<std::string> expected = DocumentAuthorityHash(grants);
      const absl::StatusOr<std::string> actual = AuthorityHash(grants);
      ASSERT_EQ(actual.ok(), expected.ok());
      if (expected.ok()) {
        ASSERT_EQ(*actual, *expected);
      } else {
        ASSERT_EQ(actual.status(), expected.status());
      }
    }
  }
}

TEST(AuthorityHashTest, SortsBySupplementaryCodeUnitsNotBytes) {
  // U+1F600 (bytes F0…) sorts before U+E000 (bytes EE…) by code unit: the ASCII fast path must
  // not be taken for these, and the hash must be the document path's.
  CapabilityGrant a, b;
  a.set_id("\xf0\x9f\x98\x80");
  b.set_id("\xee\x80\x80");
  for (CapabilityGrant* grant : {&a, &b}) grant->mutable_issued_at()->set_seconds(1);
  const std::vector<CapabilityGrant> grants = {b, a};
  const absl::StatusOr<std::string> expected = DocumentAuthorityHash(grants);
  ASSERT_OK(expected.status());
  EXPECT_THAT(AuthorityHash(grants), IsOkAndHolds(*expected));
  EXPECT_THAT(AuthorityHash({a, b}), IsOkAndHolds(*expected));
}

}  // namespace
}  // namespace sharedos::common
