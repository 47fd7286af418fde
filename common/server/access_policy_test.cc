#include "common/server/access_policy.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"

namespace sharedos::common::server {
namespace {

using ::testing::HasSubstr;

// The services SharedOS serves (ToolProvider and ResourceProvider are hosts' to serve).
std::vector<const google::protobuf::ServiceDescriptor*> ServedServices() {
  return {
      audit::v1::AppendRequest::descriptor()->file()->FindServiceByName("AuditLog"),
      authorizer::v1::AuthorizeRequest::descriptor()->file()->FindServiceByName("Authorizer"),
      envelope::v1::OpenTurnRequest::descriptor()->file()->FindServiceByName("Envelope"),
      envelope::v1::ReceiveRequest::descriptor()->file()->FindServiceByName("MessageRoutes"),
      envelope::v1::ReceiveRequest::descriptor()->file()->FindServiceByName("MessageTransport"),
      grantstore::v1::IssueGrantRequest::descriptor()->file()->FindServiceByName("GrantStore"),
      status::v1::GetStatusRequest::descriptor()->file()->FindServiceByName("Status"),
  };
}

Principal Make(Role role, std::string address, std::vector<std::string> namespaces = {},
               std::vector<std::string> owners = {}, std::vector<std::string> authorities = {}) {
  Principal principal;
  principal.name = "test";
  principal.role = role;
  principal.address = std::move(address);
  principal.scope.namespaces = std::move(namespaces);
  principal.scope.owners = std::move(owners);
  principal.scope.authorities = std::move(authorities);
  return principal;
}

TEST(AccessTableTest, EveryServedMethodHasItsRowAndEveryRowAMethod) {
  std::set<std::string> served;
  for (const google::protobuf::ServiceDescriptor* service : ServedServices()) {
    ASSERT_NE(service, nullptr);
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string method =
          absl::StrCat(service->full_name(), "/", service->method(i)->name());
      served.insert(method);
      const MethodPolicy* row = PolicyFor(method);
      ASSERT_NE(row, nullptr) << method << " has no row in the access table";
      EXPECT_FALSE(row->access.empty()) << method;
    }
  }
  for (const MethodPolicy& row : AccessTable()) {
    if (absl::StartsWith(row.method, "console ")) continue;
    EXPECT_TRUE(served.count(row.method)) << row.method << " names no served method";
  }
}

TEST(AccessTableTest, AMethodOutsideTheTableIsRefusedToEveryone) {
  const Principal operator_admin = Make(Role::kAdmin, "service:ops", {"*"});
  EXPECT_EQ(Admit("sharedos.envelope.v1.ToolProvider/Invoke", operator_admin).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckTarget("nope/Nope", operator_admin, {}).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(CoversTest, StarCoversEveryValueAndAnEmptyListNone) {
  EXPECT_TRUE(ScopeCovers({"*"}, "world-a"));
  EXPECT_TRUE(ScopeCovers({"*"}, ""));
  EXPECT_TRUE(ScopeCovers({"world-a"}, "world-a"));
  EXPECT_FALSE(ScopeCovers({"world-a"}, "world-b"));
  EXPECT_FALSE(ScopeCovers({"world-a"}, ""));
  EXPECT_FALSE(ScopeCovers({}, "world-a"));
}

TEST(AccessRulesTest, AScopedAdminReadsTheRecordOfItsOwnNamespacesOnly) {
  const Principal admin_b = Make(Role::kAdmin, "service:ops-b", {"world-b"});
  const std::string query = "sharedos.audit.v1.AuditLog/Query";
  EXPECT_TRUE(CheckTarget(query, admin_b, {"world-b"}).ok());
  absl::Status other = CheckTarget(query, admin_b, {"world-demo"});
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(other.message()), HasSubstr("world-demo"));
  absl::Status unfiltered = CheckTarget(query, admin_b, {""});
  EXPECT_EQ(unfiltered.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(unfiltered.message()), HasSubstr("namespace_id: required"));
  // The chain as a whole, and the process, are the operator's.
  EXPECT_EQ(CheckTarget("sharedos.audit.v1.AuditLog/Verify", admin_b, {}).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckTarget("sharedos.status.v1.Status/GetStatus", admin_b, {}).code(),
            absl::StatusCode::kPermissionDenied);
  const Principal operator_admin = Make(Role::kAdmin, "service:ops", {"*"});
  EXPECT_TRUE(CheckTarget(query, operator_admin, {""}).ok());
  EXPECT_TRUE(CheckTarget("sharedos.audit.v1.AuditLog/Verify", operator_admin, {}).ok());
}

TEST(AccessRulesTest, AHostNamesOnlyItsOwnersOrAuthoritiesAsATurnsAuthority) {
  const std::string open = "sharedos.envelope.v1.Envelope/OpenTurn";
  const Principal bob_host =
      Make(Role::kHost, "service:host-b", {"world-demo"}, {"human:user-bob"});
  EXPECT_TRUE(CheckTarget(open, bob_host, {"world-demo", "human:user-bob", "human:user-bob"}).ok());
  absl::Status alice_authority =
      CheckTarget(open, bob_host, {"world-demo", "human:user-bob", "human:user-alice"});
  EXPECT_EQ(alice_authority.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(alice_authority.message()), HasSubstr("authority \"human:user-alice\""));
  EXPECT_EQ(
      CheckTarget(open, bob_host, {"world-demo", "human:user-alice", "human:user-bob"}).code(),
      absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckTarget(open, bob_host, {"world-b", "human:user-bob", "human:user-bob"}).code(),
            absl::StatusCode::kPermissionDenied);
  // Authorities listed explicitly replace the owners for the authority.
  const Principal delegating = Make(Role::kHost, "service:host-c", {"world-demo"},
                                    {"human:user-bob"}, {"agent:agent-orchestrator"});
  EXPECT_TRUE(
      CheckTarget(open, delegating, {"world-demo", "human:user-bob", "agent:agent-orchestrator"})
          .ok());
  EXPECT_FALSE(
      CheckTarget(open, delegating, {"world-demo", "human:user-bob", "human:user-bob"}).ok());
  EXPECT_FALSE(HostCovers(bob_host.scope, {"world-demo", "human:user-bob", "human:user-alice"}));
  EXPECT_TRUE(HostCovers(bob_host.scope, {"world-demo", "human:user-bob", ""}));
}

TEST(AccessRulesTest, EachServiceCallsOnlyWhatItsJobNeeds) {
  const Principal authorizer = Make(Role::kService, std::string(kAuthorizerService));
  const Principal envelope = Make(Role::kService, std::string(kEnvelopeService));
  const Principal grantstore = Make(Role::kService, std::string(kGrantstoreService));
  const Principal legacy = Make(Role::kService, "service:sharedos");
  EXPECT_TRUE(Admit("sharedos.grantstore.v1.GrantStore/LoadAuthority", authorizer).ok());
  EXPECT_TRUE(Admit("sharedos.grantstore.v1.GrantStore/TryConsume", authorizer).ok());
  EXPECT_FALSE(Admit("sharedos.grantstore.v1.GrantStore/TryConsume", envelope).ok());
  EXPECT_FALSE(Admit("sharedos.grantstore.v1.GrantStore/LoadAuthority", legacy).ok());
  EXPECT_TRUE(Admit("sharedos.authorizer.v1.Authorizer/Authorize", envelope).ok());
  EXPECT_FALSE(Admit("sharedos.authorizer.v1.Authorizer/Authorize", grantstore).ok());
  EXPECT_TRUE(Admit("sharedos.audit.v1.AuditLog/Append", grantstore).ok());
  // The grant store reads its own control-plane records back to check its anchor (ADR 0021;
  // audit_svc narrows it to control-plane records); no other service reads the record.
  EXPECT_TRUE(Admit("sharedos.audit.v1.AuditLog/Query", grantstore).ok());
  EXPECT_FALSE(Admit("sharedos.audit.v1.AuditLog/Query", envelope).ok());
  EXPECT_FALSE(Admit("sharedos.audit.v1.AuditLog/Query", authorizer).ok());
  EXPECT_FALSE(Admit("sharedos.audit.v1.AuditLog/Tail", grantstore).ok());
  EXPECT_FALSE(Admit("sharedos.grantstore.v1.GrantStore/IssueGrant", authorizer).ok());
  // No service reaches a host's or an operator's methods.
  EXPECT_FALSE(Admit("sharedos.envelope.v1.Envelope/OpenTurn", envelope).ok());
}

// The console process's own credential only looks up the credentials people sign in with; every
// page calls the services with the signed-in person's credential (docs/adr/0022).
TEST(AccessRulesTest, TheConsolesOwnCredentialOnlyLooksUpCredentials) {
  const Principal console = Make(Role::kService, "service:console");
  int refused = 0;
  for (const google::protobuf::ServiceDescriptor* service : ServedServices()) {
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string method =
          absl::StrCat(service->full_name(), "/", service->method(i)->name());
      if (method == "sharedos.grantstore.v1.GrantStore/AuthenticateCredential") {
        EXPECT_TRUE(Admit(method, console).ok()) << method;
      } else if (!Admit(method, console).ok()) {
        ++refused;
      } else {
        ADD_FAILURE() << "service:console admitted to " << method;
      }
    }
  }
  EXPECT_GT(refused, 40);
}

TEST(AccessRulesTest, AReviewerReachesOnlyWhatIsAddressedToItsPrincipal) {
  const std::string get = "sharedos.grantstore.v1.GrantStore/GetEscalation";
  const Principal alice =
      Make(Role::kReviewer, "human:user-alice", {"world-demo"}, {"human:user-bob"});
  EXPECT_TRUE(MayReach(get, alice, {"world-demo", "human:user-alice"}));
  // Owners on a reviewer credential do not widen it to another human's queue.
  EXPECT_FALSE(MayReach(get, alice, {"world-demo", "human:user-bob"}));
  EXPECT_FALSE(MayReach(get, alice, {"world-b", "human:user-alice"}));
  // A host: the status of escalations of its namespaces and owners.
  const Principal bob_host =
      Make(Role::kHost, "service:host-b", {"world-demo"}, {"human:user-bob"});
  EXPECT_TRUE(MayReach(get, bob_host, {"world-demo", "human:user-bob"}));
  EXPECT_FALSE(MayReach(get, bob_host, {"world-demo", "human:user-alice"}));
}

}  // namespace
}  // namespace sharedos::common::server
