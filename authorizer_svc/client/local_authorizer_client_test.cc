#include "authorizer_svc/client/local_authorizer_client.h"

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "capability/test_builders.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::client {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;

// The in-process client answers what the AuthorizerCore answers, records included.
TEST(LocalAuthorizerClientTest, CallsTheAuthorizerCoreDirectly) {
  grantstore::client::FakeGrantStoreClient store;
  store.IssueGrant(GrantBuilder("g-read").WithCapability(Cap("files", {"projects"}, {"read"})));
  audit::client::FakeAuditWriter audit;
  common::SimulatedClock clock(T0() + absl::Seconds(5));
  authorizer::core::AuthorizerCore authorizer_core(store, audit, clock,
                                                   "local-client-test-secret-0123456789", {});
  LocalAuthorizerClient client(authorizer_core);

  az::OpenTurnAuthorityRequest open;
  *open.mutable_context() = MakeContext();
  open.set_turn_id("turn-1");
  absl::StatusOr<az::OpenTurnAuthorityResponse> lease = client.OpenTurnAuthority(open, {});
  ASSERT_THAT(lease, IsOk());
  EXPECT_EQ(lease->status(), az::LEASE_STATUS_RESOLVED);

  az::AuthorizeRequest request;
  request.set_lease_id(lease->lease_id());
  *request.mutable_requirement() = Req("files", {"projects", "notes.md"}, "read");
  *request.mutable_declared_ceiling() = Req("files", {"projects"}, "read");
  request.set_consume(true);
  request.set_operation_id("call-1");
  request.set_tool("files.read");
  absl::StatusOr<az::AuthorizeResponse> decided = client.Authorize(request, {});
  ASSERT_THAT(decided, IsOk());
  EXPECT_TRUE(decided->discovery().discoverable());
  EXPECT_TRUE(decided->decision().allowed());
  EXPECT_EQ(decided->decision().matched_grant_id(), "g-read");
  int checked = 0;
  for (const pb::AuditEvent& event : audit.events()) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED) ++checked;
  }
  EXPECT_EQ(checked, 1);

  az::CloseTurnAuthorityRequest close;
  close.set_lease_id(lease->lease_id());
  ASSERT_THAT(client.CloseTurnAuthority(close, {}), IsOk());
  EXPECT_THAT(client.Authorize(request, {}), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace sharedos::authorizer::client
