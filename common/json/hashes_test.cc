// Golden values: computed independently by a JavaScript restatement of the reference's
// canonicalJson with code-unit key order (node 20; see docs/adr/0002), over the same objects.

#include "common/json/hashes.h"

#include <vector>

#include "common/json/protocol_json.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::CapabilityRequest;
using ::sharedos::protocol::v1::PublishedToolDefinition;
using ::sharedos::protocol::v1::ToolDefinition;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// sha256("[]").
constexpr char kEmptyArrayHash[] =
    "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";

google::protobuf::Timestamp Seconds(int64_t seconds, int32_t nanos = 0) {
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(nanos);
  return timestamp;
}

Address Agent() {
  Address address;
  address.set_agent_id("alice-assistant");
  return address;
}

Address Alice() {
  Address address;
  address.set_human_user_id("alice");
  return address;
}

// {id:"grant-read", …, capabilities:[files ["Memory","project-x"] read,list descendants],
//  constraints:{}, issuedAt:"2025-12-31T23:00:00Z"}
CapabilityGrant GrantA() {
  CapabilityGrant grant;
  grant.set_id("grant-read");
  grant.set_namespace_id("world-1");
  *grant.mutable_subject() = Agent();
  *grant.mutable_issuer() = Alice();
  auto* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path("Memory");
  capability->mutable_resource()->add_path("project-x");
  capability->add_actions("read");
  capability->add_actions("list");
  capability->set_scope(protocol::v1::SCOPE_DESCENDANTS);
  grant.mutable_constraints();
  *grant.mutable_issued_at() = Seconds(1767222000);
  return grant;
}

// Every optional field, mixed-case metadata keys, a fractional second and a real number.
CapabilityGrant GrantB() {
  CapabilityGrant grant;
  grant.set_id("grant-Bounded");
  grant.set_namespace_id("world-1");
  *grant.mutable_subject() = Agent();
  *grant.mutable_issuer() = Alice();
  auto* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("sharedos.execution");
  capability->mutable_resource()->add_path("agent");
  capability->mutable_resource()->add_path("bob-assistant");
  *capability->mutable_resource()->mutable_owner() = Alice();
  capability->add_actions("invoke");
  capability->set_scope(protocol::v1::SCOPE_EXACT);
  auto* constraints = grant.mutable_constraints();
  constraints->add_purposes("assist");
  constraints->add_purposes("triage");
  *constraints->mutable_not_before() = Seconds(1767139200, 500000000);
  *constraints->mutable_expires_at() = Seconds(1769904000);
  constraints->set_max_uses(3);
  constraints->set_delegation_depth(0);
  *grant.mutable_issued_at() = Seconds(1767096000);
  *grant.mutable_revoked_at() = Seconds(1772323200);
  grant.set_parent_grant_id("grant-root");
  auto& fields = *grant.mutable_metadata()->mutable_fields();
  fields["Zeta"].set_number_value(1);
  fields["alpha"].set_string_value("x");
  fields["_note"].set_bool_value(true);
  auto& nested = *fields["nested"].mutable_struct_value()->mutable_fields();
  nested["b"].mutable_list_value()->add_values()->set_number_value(1);
  nested["b"].mutable_list_value()->add_values()->set_number_value(2.5);
  nested["A"].set_null_value(google::protobuf::NULL_VALUE);
  return grant;
}

TEST(AuthorityHashTest, GoldenValue) {
  const std::vector<CapabilityGrant> grants = {GrantA(), GrantB()};
  EXPECT_THAT(AuthorityHash(grants),
              IsOkAndHolds(Eq("d860414bfbcf1c362207ede5163426e8c65c1b13a38a6b1aded50be67d890a1c")));
}

TEST(AuthorityHashTest, FromKeptTextsIsTheSameValueInAnyOrder) {
  CapabilityGrant accented = GrantA();
  accented.set_id("grant-\xc3\xa9t\xc3\xa9");  // Not ASCII: sorted by code units.
  const GrantHashText a = *GrantHashTextOf(GrantA());
  const GrantHashText b = *GrantHashTextOf(GrantB());
  const GrantHashText c = *GrantHashTextOf(accented);
  EXPECT_TRUE(a.ascii);
  EXPECT_FALSE(c.ascii);
  EXPECT_EQ(AuthorityHashOfTexts({&b, &a}),
            "d860414bfbcf1c362207ede5163426e8c65c1b13a38a6b1aded50be67d890a1c");
  EXPECT_EQ(AuthorityHashOfTexts({&c, &b, &a}),
            *AuthorityHash(std::vector<CapabilityGrant>{GrantA(), GrantB(), accented}));
  EXPECT_EQ(AuthorityHashOfTexts({&a, &c, &b}), AuthorityHashOfTexts({&c, &b, &a}));
  EXPECT_EQ(AuthorityHashOfTexts({}), kEmptyArrayHash);
}

TEST(AuthorityHashTest, IndependentOfGrantOrder) {
  const std::vector<CapabilityGrant> forward = {GrantA(), GrantB()};
  const std::vector<CapabilityGrant> backward = {GrantB(), GrantA()};
  EXPECT_EQ(*AuthorityHash(forward), *AuthorityHash(backward));
}

TEST(AuthorityHashTest, EmptySetHashesEmptyArray) {
  EXPECT_THAT(AuthorityHash({}), IsOkAndHolds(Eq(kEmptyArrayHash)));
}

TEST(AuthorityHashTest, EveryFieldCounts) {
  const std::string base = *AuthorityHash(std::vector<CapabilityGrant>{GrantB()});
  CapabilityGrant changed = GrantB();
  changed.mutable_constraints()->set_max_uses(4);
  EXPECT_NE(*AuthorityHash(std::vector<CapabilityGrant>{changed}), base);
  changed = GrantB();
  (*changed.mutable_metadata()->mutable_fields())["alpha"].set_string_value("y");
  EXPECT_NE(*AuthorityHash(std::vector<CapabilityGrant>{changed}), base);
  changed = GrantB();
  *changed.mutable_constraints()->mutable_not_before() = Seconds(1767139200, 501000000);
  EXPECT_NE(*AuthorityHash(std::vector<CapabilityGrant>{changed}), base);
}

PublishedToolDefinition Published(ToolDefinition tool) { return PublishToolDefinition(tool); }

ToolDefinition FilesRead() {
  ToolDefinition tool;
  tool.set_name("files.read");
  tool.set_description("Read a file.");
  tool.set_namespace_("files");
  tool.set_source("sharedos");
  tool.set_read_write(protocol::v1::READ_WRITE_READ);
  auto& schema = *tool.mutable_input_schema()->mutable_fields();
  schema["type"].set_string_value("object");
  auto& path = *(*schema["properties"].mutable_struct_value()->mutable_fields())["path"]
                    .mutable_struct_value()
                    ->mutable_fields();
  path["type"].set_string_value("array");
  (*path["items"].mutable_struct_value()->mutable_fields())["type"].set_string_value("string");
  schema["required"].mutable_list_value()->add_values()->set_string_value("path");
  schema["additionalProperties"].set_bool_value(false);
  schema["$schema"].set_string_value("http://json-schema.org/draft-07/schema#");
  tool.mutable_required_capability()->mutable_resource()->set_namespace_("files");
  tool.mutable_required_capability()->set_action("read");
  return tool;
}

ToolDefinition FilesDelete() {
  ToolDefinition tool;
  tool.set_name("files.delete");
  tool.set_description("Delete a file.");
  tool.set_namespace_("files");
  tool.set_source("sharedos");
  tool.set_read_write(protocol::v1::READ_WRITE_WRITE);
  (*tool.mutable_input_schema()->mutable_fields())["type"].set_string_value("object");
  (*tool.mutable_output_schema()->mutable_fields())["type"].set_string_value("object");
  tool.mutable_annotations()->set_destructive(true);
  tool.mutable_annotations()->set_idempotent(false);
  return tool;
}

ToolDefinition NotionSearch() {
  ToolDefinition tool;
  tool.set_name("Notion.Search");
  tool.set_description("Search Notion.");
  tool.set_namespace_("notion");
  tool.set_source("mcp");
  tool.set_read_write(protocol::v1::READ_WRITE_READ);
  auto& schema = *tool.mutable_input_schema()->mutable_fields();
  schema["type"].set_string_value("object");
  auto& properties = *schema["properties"].mutable_struct_value()->mutable_fields();
  (*properties["Query"].mutable_struct_value()->mutable_fields())["type"].set_string_value(
      "string");
  (*properties["query"].mutable_struct_value()->mutable_fields())["type"].set_string_value(
      "string");
  return tool;
}

TEST(CatalogHashTest, GoldenValue) {
  const std::vector<PublishedToolDefinition> tools = {
      Published(FilesRead()), Published(FilesDelete()), Published(NotionSearch())};
  EXPECT_THAT(CatalogHash(tools),
              IsOkAndHolds(Eq("4fd9007fdc62f0b01bf3524bf975a10b408e58d296a439851d7ec4dbc6fcf7f5")));
}

TEST(CatalogHashTest, IndependentOfInputOrder) {
  const std::vector<PublishedToolDefinition> a = {Published(FilesRead()), Published(FilesDelete()),
                                                  Published(NotionSearch())};
  const std::vector<PublishedToolDefinition> b = {Published(NotionSearch()), Published(FilesRead()),
                                                  Published(FilesDelete())};
  EXPECT_EQ(*CatalogHash(a), *CatalogHash(b));
}

TEST(CatalogHashTest, EmptyCatalogueHashesEmptyArray) {
  EXPECT_THAT(CatalogHash({}), IsOkAndHolds(Eq(kEmptyArrayHash)));
}

TEST(CatalogHashTest, DuplicateNamesRefused) {
  const std::vector<PublishedToolDefinition> tools = {Published(FilesRead()),
                                                      Published(FilesRead())};
  EXPECT_THAT(CatalogHash(tools), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("duplicate tool name \"files.read\"")));
}

TEST(CatalogHashTest, CeilingAndToolMetadataDoNotEnter) {
  ToolDefinition tool = FilesRead();
  const std::string base = *CatalogHash(std::vector<PublishedToolDefinition>{Published(tool)});
  tool.mutable_required_capability()->set_action("write");
  (*tool.mutable_metadata()->mutable_fields())["credential"].set_string_value("x");
  EXPECT_EQ(*CatalogHash(std::vector<PublishedToolDefinition>{Published(tool)}), base);
  tool.set_description("Read one file.");
  EXPECT_NE(*CatalogHash(std::vector<PublishedToolDefinition>{Published(tool)}), base);
}

CapabilityRequest Ask() {
  CapabilityRequest request;
  request.set_namespace_id("world-1");
  *request.mutable_requester() = Agent();
  *request.mutable_owner() = Alice();
  auto* capability = request.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path("Memory");
  capability->mutable_resource()->add_path("project-x");
  capability->add_actions("read");
  capability->set_scope(protocol::v1::SCOPE_EXACT);
  request.set_purpose("assist");
  return request;
}

TEST(CapabilityRequestIdTest, GoldenValue) {
  EXPECT_THAT(
      CapabilityRequestId(Ask()),
      IsOkAndHolds(Eq("capreq-e9b6e0cb3554a851fdc1e2b0b2720432991db61f8f0b632e033a70fec8a792eb")));
}

TEST(CapabilityRequestIdTest, PresentEmptyConstraintsCount) {
  CapabilityRequest request = Ask();
  request.mutable_constraints();
  EXPECT_THAT(
      CapabilityRequestId(request),
      IsOkAndHolds(Eq("capreq-b746563965fb475b290b679f04364556251972e74a35501101ff5f05193fbe7f")));
}

TEST(CapabilityRequestIdTest, IgnoresIdRequestedAtAndMetadata) {
  CapabilityRequest request = Ask();
  request.set_id("capreq-whatever");
  *request.mutable_requested_at() = Seconds(1800000000);
  (*request.mutable_metadata()->mutable_fields())["note"].set_string_value("x");
  EXPECT_EQ(*CapabilityRequestId(request), *CapabilityRequestId(Ask()));
  EXPECT_THAT(*CapabilityRequestId(request), StartsWith("capreq-"));
}

}  // namespace
}  // namespace sharedos::common
