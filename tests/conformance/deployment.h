// The deployments a conformance column reaches SharedOS through (cases.md "Columns").
//
//   kernel   KernelDeployment: the TurnEngine, the AuthorizerCore and the grant store core in
//            this process, driven by direct calls (a scripted adversary in the host seat). The
//            control plane and the audit log are still their gRPC services, over in-process
//            channels, so the world is armed and the record read back exactly as in the other
//            columns. World clock: a SimulatedClock armed at 2026-08-18T09:00:00Z, moved 1 s per
//            declared step (Tick).
//   grpc     ProcessDeployment: audit_svc, grantstore_svc, authorizer_svc and two envelope_svc
//            processes (one with the notion-mcp provider attached, one without), started by the
//            four-process harness (tests/testing/deployment.h), reached over
//            Envelope.OpenTurn / InvokeTool / FinishTurn on loopback. World clock: the real one
//            (the processes run on it); the world's instants are relative to each row's arming.
//            The MCP columns use the same deployment (the host opens RUNTIME_MCP turns).
//   grpc-replicated  the same, with two replicas of every service on one PostgreSQL database
//            (DeploymentOptions::replicated; a cluster of the test's own, started with initdb): the
//            host, the control plane and every service reach a service's replicas through one
//            round-robin target, so a turn's calls alternate between the envelope that owns it
//            and the one that forwards them (ADR 0011). Outages stop both grant store replicas.
//
// Conditions: Outage("usage") makes usage counting unreachable, Outage("grantstore") the whole
// grant store (kernel: a fault-injecting GrantStoreClient in front of the authorizer; grpc: the
// grantstore_svc process is stopped, and Recover() restarts it on the same port and database).
// Not thread-safe: one runner drives one deployment.

#ifndef SHAREDOS_TESTS_CONFORMANCE_DEPLOYMENT_H_
#define SHAREDOS_TESTS_CONFORMANCE_DEPLOYMENT_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/envelope/v1/messaging.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"
#include "tests/conformance/notion_fixture.h"
#include "tests/testing/deployment.h"

namespace sharedos::conformance {

// The host's turn API (envelope.proto), whichever way the column reaches it. A refused turn or
// call is an OK response; an error status is the call's own (e.g. INVALID_ARGUMENT).
class HostApi {
 public:
  virtual ~HostApi() = default;
  virtual absl::StatusOr<envelope::v1::OpenTurnResponse> OpenTurn(
      const envelope::v1::OpenTurnRequest& request) = 0;
  virtual absl::StatusOr<envelope::v1::InvokeToolResponse> InvokeTool(
      const envelope::v1::InvokeToolRequest& request) = 0;
  virtual absl::StatusOr<envelope::v1::FinishTurnResponse> FinishTurn(
      const envelope::v1::FinishTurnRequest& request) = 0;
  virtual absl::StatusOr<envelope::v1::GetTurnResponse> GetTurn(
      const envelope::v1::GetTurnRequest& request) = 0;
  // The host's transport (the envelope's built-in one): revokes a route lease.
  virtual absl::StatusOr<envelope::v1::RevokeRouteResponse> RevokeRoute(
      const envelope::v1::RevokeRouteRequest& request) = 0;
  // The host's transport: takes messages from a receiver's inbox (MessageRoutes.Receive).
  virtual absl::StatusOr<envelope::v1::ReceiveResponse> Receive(
      const envelope::v1::ReceiveRequest& request) = 0;
  // A host sends a message for a turn's actor (Envelope.SendMessage).
  virtual absl::StatusOr<envelope::v1::SendMessageResponse> SendMessage(
      const envelope::v1::SendMessageRequest& request) = 0;
  // A host invokes a resource operation for a turn's actor (Envelope.InvokeResource).
  virtual absl::StatusOr<envelope::v1::InvokeResourceResponse> InvokeResource(
      const envelope::v1::InvokeResourceRequest& request) = 0;
  // Turns tool namespaces of a running turn on or off (the availability plane).
  virtual absl::StatusOr<envelope::v1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
      const envelope::v1::UpdateToolNamespacesRequest& request) = 0;
};

// A surface the host credential can reach besides its own turns (row 18): its name and a call
// answering what it returned (serialized), or its error.
struct Surface {
  std::string name;
  std::function<absl::StatusOr<std::string>()> call;
};

struct DeploymentOptions {
  // Runfiles-relative registry files (world.json "registries").
  std::vector<std::string> registries;
  // The world's files root (already populated).
  std::string files_root;
  // Scratch directory for databases, tokens and outboxes.
  std::string dir;
  // notion.search as registered (the fixture provider publishes it).
  protocol::v1::ToolDefinition notion_definition;
  std::string notion_provider_id = "notion-mcp";
  std::string namespace_id;
  std::string owner_key;  // "human:user-alice"
  // Negative controls (kernel only): every Authorize answers allowed; the broker's ListTools
  // fails (every turn with it attached ends tool_catalog_unavailable at admission).
  bool allow_everything = false;
  bool broker_listing_fails = false;
  // Processes: serve the MCP front door (envelope_svc --mcp_secret_file, --mcp_port=0). When the
  // envelope has none, the deployment fails UNIMPLEMENTED naming it.
  bool mcp = false;
  // Processes: two replicas of every service on one PostgreSQL database the deployment starts
  // (column grpc-replicated).
  bool replicated = false;
};

class Deployment {
 public:
  virtual ~Deployment() = default;
  virtual std::string column() const = 0;
  // The host's turn API; `broker` = the envelope with the notion-mcp provider attached.
  virtual HostApi& host(bool broker) = 0;
  // Another host (the broker's envelope), scoped to the world's namespace and owner bob only
  // (rows T1–T2: a host of one owner naming another's authority).
  virtual HostApi& other_host() = 0;
  virtual grantstore::v1::GrantStore::StubInterface& grants() = 0;
  virtual audit::v1::AuditLog::StubInterface& audit() = 0;
  virtual std::string admin_token() const = 0;
  virtual std::string host_token() const = 0;
  // Reviewer credentials: the world's reviewer (the context owner), and another human.
  std::string reviewer_token() const { return testing::DeploymentCredentials().reviewer_token; }
  std::string other_reviewer_token() const {
    return testing::DeploymentCredentials().other_reviewer_token;
  }
  // The world clock's current instant.
  virtual absl::Time Now() = 0;
  // One declared step has been taken (kernel: +1 s; grpc: the real clock moves by itself).
  virtual void Tick() = 0;
  // Returns once the world clock is past `instant`.
  virtual absl::Status PassBeyond(absl::Time instant) = 0;
  virtual absl::Status Outage(const std::string& what) = 0;
  virtual absl::Status Recover() = 0;
  virtual NotionFixture& notion() = 0;
  // Writes `grant` into the grant store's database directly, past the control plane's
  // validation (row 19: a child wider than its parent, which IssueGrant and DeriveGrant refuse
  // to create — the condition of a legacy or corrupted record the kernel must still refuse).
  virtual absl::Status PlantGrant(const protocol::v1::CapabilityGrant& grant) = 0;
  // The services reachable besides the turn API, called with `token` (the host credential, or a
  // turn's execution token) — row 18.
  virtual std::vector<Surface> Surfaces(const std::string& token) = 0;
  // grpc: the envelope with the broker attached ("host:port"), for the MCP driver.
  virtual std::string envelope_address() const { return ""; }
};

// Errors: whatever starting a component answers.
absl::StatusOr<std::unique_ptr<Deployment>> StartKernelDeployment(const DeploymentOptions& options);
absl::StatusOr<std::unique_ptr<Deployment>> StartProcessDeployment(
    const DeploymentOptions& options);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_DEPLOYMENT_H_
