#include "common/validation/protocol.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/status_matchers.h"
#include "common/validation/limits.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sharedos::common::validation {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;

// ---- Fixtures: one valid instance of each object ----

constexpr char kCapability[] = R"pb(
  resource { namespace: "files" path: "docs" path: "a.txt" }
  actions: "read"
  scope: SCOPE_EXACT
)pb";

constexpr char kContext[] = R"pb(
  namespace_id: "world-1"
  actor { agent_id: "alice" }
  authority { human_user_id: "bob" }
  owner { human_user_id: "bob" }
  purpose: "triage"
  trace_id: "trace-1"
  enabled_tool_namespaces: "files"
  now { seconds: 1700000000 }
)pb";

constexpr char kGrant[] = R"pb(
  id: "grant-1"
  namespace_id: "world-1"
  subject { agent_id: "alice" }
  issuer { human_user_id: "bob" }
  capabilities {
    resource { namespace: "files" path: "docs" path: "a.txt" }
    actions: "read"
    scope: SCOPE_EXACT
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";

constexpr char kCapabilityRequest[] = R"pb(
  id: "capreq-1"
  namespace_id: "world-1"
  requester { agent_id: "alice" }
  owner { human_user_id: "bob" }
  capabilities {
    resource { namespace: "files" path: "docs" path: "a.txt" }
    actions: "read"
    scope: SCOPE_EXACT
  }
  purpose: "triage"
  requested_at { seconds: 1700000000 }
)pb";

constexpr char kEscalation[] = R"pb(
  reason: "needs write access"
  reviewer { human_user_id: "bob" }
  requested_at { seconds: 1700000000 }
  status: ESCALATION_STATUS_PENDING
)pb";

constexpr char kEnvelope[] = R"pb(
  version: "1"
  id: "msg-1"
  sender { human_user_id: "bob" }
  receiver { agent_id: "alice" }
  purpose: "triage"
  payload { string_value: "hello" }
  trace_id: "trace-1"
  created_at { seconds: 1700000000 }
)pb";

constexpr char kToolDefinition[] = R"pb(
  name: "files.read"
  description: "Reads a file."
  namespace: "files"
  source: "sharedos"
  read_write: READ_WRITE_READ
  input_schema {}
  required_capability {
    resource { namespace: "files" }
    action: "read"
  }
)pb";

constexpr char kPublishedTool[] = R"pb(
  name: "files.read"
  description: "Reads a file."
  input_schema {}
  metadata { namespace: "files" source: "sharedos" }
)pb";

constexpr char kCatalog[] = R"pb(
  version: "1"
  execution_id: "exec-1"
  catalog_hash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  tools {
    name: "a.read"
    description: "A"
    input_schema {}
  }
  tools {
    name: "b.write"
    description: "B"
    input_schema {}
  }
)pb";

constexpr char kToolCall[] = R"pb(
  id: "call-1"
  tool: "files.read"
  arguments {}
  trace_id: "trace-1"
  requested_at { seconds: 1700000000 }
)pb";

constexpr char kToolResult[] = R"pb(
  call_id: "call-1"
  tool: "files.read"
  status: TOOL_RESULT_STATUS_SUCCEEDED
  output { null_value: NULL_VALUE }
  completed_at { seconds: 1700000000 }
)pb";

constexpr char kExecutionRequest[] = R"pb(
  version: "1"
  execution_id: "exec-1"
  agent { agent_id: "alice" }
  context {
    namespace_id: "world-1"
    actor { agent_id: "alice" }
    authority { human_user_id: "bob" }
    owner { human_user_id: "bob" }
    purpose: "triage"
    trace_id: "trace-1"
    enabled_tool_namespaces: "files"
    now { seconds: 1700000000 }
  }
  message {
    version: "1"
    id: "msg-1"
    sender { human_user_id: "bob" }
    receiver { agent_id: "alice" }
    purpose: "triage"
    payload { string_value: "hello" }
    trace_id: "trace-1"
    created_at { seconds: 1700000000 }
  }
  tools: "files.read"
  options { max_steps: 16 }
)pb";

constexpr char kEvent[] = R"pb(
  version: "1"
  event_id: "evt-1"
  execution_id: "exec-1"
  trace_id: "trace-1"
  sequence: 0
  type: "turn.started"
  data { struct_value {} }
  occurred_at { seconds: 1700000000 }
)pb";

constexpr char kExecutionResult[] = R"pb(
  version: "1"
  execution_id: "exec-1"
  trace_id: "trace-1"
  status: EXECUTION_STATUS_SUCCEEDED
  output { string_value: "done" }
  events {
    version: "1"
    event_id: "evt-1"
    execution_id: "exec-1"
    trace_id: "trace-1"
    sequence: 0
    type: "turn.started"
    data { struct_value {} }
    occurred_at { seconds: 1700000000 }
  }
  started_at { seconds: 1700000000 }
  completed_at { seconds: 1700000001 }
)pb";

constexpr char kManifest[] =
    R"pb(
  id: "sharedos.standard" version: "0.1.0-alpha.4" protocol_version: "1"
    )pb";

constexpr char kAuditEvent[] = R"pb(
  version: "1"
  id: "2c7d8a4e-0000-4000-8000-000000000001"
  type: AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
  outcome: AUDIT_OUTCOME_ALLOWED
  at { seconds: 1700000000 }
  trace_id: "trace-1"
  namespace_id: "world-1"
  actor { agent_id: "alice" }
  authority { human_user_id: "bob" }
  owner { human_user_id: "bob" }
  purpose: "triage"
  source: AUDIT_SOURCE_KERNEL
)pb";

template <typename T>
T Parse(absl::string_view text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(text), &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

// ---- Table runner ----

template <typename T>
struct Case {
  std::string name;
  std::function<void(T&)> mutate;
  std::string error;  // "" expects OK; otherwise the exact INVALID_ARGUMENT message.
};

template <typename T>
void RunCases(absl::string_view valid_text, absl::Status (*validate)(T*, const PathRef&),
              absl::string_view path, const std::vector<Case<T>>& cases) {
  for (const Case<T>& c : cases) {
    SCOPED_TRACE(c.name);
    T message = Parse<T>(valid_text);
    c.mutate(message);
    const absl::Status status = validate(&message, path);
    if (c.error.empty()) {
      EXPECT_THAT(status, IsOk());
    } else {
      EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, c.error));
    }
  }
}

std::string Pad(size_t n, char c = 'a') { return std::string(n, c); }

// "t000", "t001", …: sorted tool names.
std::string ToolName(int i) { return absl::StrFormat("t%03d", i); }

// ---- Every fixture is valid ----

TEST(ProtocolValidationTest, FixturesAreValid) {
  auto address = Parse<pb::Address>(R"pb(service_id: "svc")pb");
  EXPECT_THAT(ValidateAddress(&address, "address"), IsOk());
  auto capability = Parse<pb::Capability>(kCapability);
  EXPECT_THAT(ValidateCapability(&capability, "capability"), IsOk());
  auto context = Parse<pb::AccessContext>(kContext);
  EXPECT_THAT(ValidateAccessContext(&context, "context"), IsOk());
  auto grant = Parse<pb::CapabilityGrant>(kGrant);
  EXPECT_THAT(ValidateCapabilityGrant(&grant, "grant"), IsOk());
  auto request = Parse<pb::CapabilityRequest>(kCapabilityRequest);
  EXPECT_THAT(ValidateCapabilityRequest(&request, "request"), IsOk());
  auto escalation = Parse<pb::Escalation>(kEscalation);
  EXPECT_THAT(ValidateEscalation(&escalation, "escalation"), IsOk());
  auto envelope = Parse<pb::MessageEnvelope>(kEnvelope);
  EXPECT_THAT(ValidateMessageEnvelope(&envelope, "envelope"), IsOk());
  auto tool = Parse<pb::ToolDefinition>(kToolDefinition);
  EXPECT_THAT(ValidateToolDefinition(&tool, "tool"), IsOk());
  auto published = Parse<pb::PublishedToolDefinition>(kPublishedTool);
  EXPECT_THAT(ValidatePublishedToolDefinition(&published, "tool"), IsOk());
  auto catalog = Parse<pb::ToolCatalog>(kCatalog);
  EXPECT_THAT(ValidateToolCatalog(&catalog, "catalog"), IsOk());
  auto call = Parse<pb::ToolCall>(kToolCall);
  EXPECT_THAT(ValidateToolCall(&call, "call"), IsOk());
  auto tool_result = Parse<pb::ToolResult>(kToolResult);
  EXPECT_THAT(ValidateToolResult(&tool_result, "result"), IsOk());
  auto execution = Parse<pb::ExecutionRequest>(kExecutionRequest);
  EXPECT_THAT(ValidateExecutionRequest(&execution, "request"), IsOk());
  auto event = Parse<pb::ExecutionEvent>(kEvent);
  EXPECT_THAT(ValidateExecutionEvent(&event, "event"), IsOk());
  auto result = Parse<pb::ExecutionResult>(kExecutionResult);
  EXPECT_THAT(ValidateExecutionResult(&result, "result"), IsOk());
  auto manifest = Parse<pb::RuntimeManifest>(kManifest);
  EXPECT_THAT(ValidateRuntimeManifest(&manifest, "manifest"), IsOk());
  auto audit = Parse<pb::AuditEvent>(kAuditEvent);
  EXPECT_THAT(ValidateAuditEvent(&audit, "event"), IsOk());
  pb::ExecutionOptions options;
  EXPECT_THAT(ValidateExecutionOptions(&options, "options"), IsOk());
}

TEST(ProtocolValidationTest, NullMessageIsRequired) {
  EXPECT_THAT(ValidateCapabilityGrant(nullptr, "grant"),
              StatusIs(absl::StatusCode::kInvalidArgument, "grant: required"));
}

// ---- Unknown fields come first, named with their path ----

TEST(ProtocolValidationTest, UnknownFieldDeepInGrantIsNamed) {
  auto grant = Parse<pb::CapabilityGrant>(kGrant);
  pb::Capability* second = grant.add_capabilities();
  *second = grant.capabilities(0);
  // Reproduce what a newer writer's bytes produce: an owner that carries
  // field 7.
  pb::Address owner;
  owner.set_agent_id("carol");
  std::string bytes = owner.SerializeAsString();
  bytes += std::string("\x38\x01", 2);  // field 7, varint 1
  ASSERT_TRUE(second->mutable_resource()->mutable_owner()->ParseFromString(bytes));
  grant.set_id("   ");  // A later, ordinary error is not reported first.
  EXPECT_THAT(ValidateCapabilityGrant(&grant, "grant"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "grant.capabilities[1].resource.owner: unknown field 7"));
}

TEST(ProtocolValidationTest, UnknownFieldBeforeVersion) {
  auto request = Parse<pb::ExecutionRequest>(kExecutionRequest);
  request.set_version("2");
  pb::Address* actor = request.mutable_context()->mutable_actor();
  actor->GetReflection()->MutableUnknownFields(actor)->AddVarint(9, 1);
  EXPECT_THAT(
      ValidateExecutionRequest(&request, "request"),
      StatusIs(absl::StatusCode::kInvalidArgument, "request.context.actor: unknown field 9"));
}

// ---- Versions ----

TEST(ProtocolValidationTest, VersionTwoIsRejectedNamingTheField) {
  auto request = Parse<pb::ExecutionRequest>(kExecutionRequest);
  request.set_version("2");
  EXPECT_THAT(ValidateExecutionRequest(&request, "request"),
              StatusIs(absl::StatusCode::kInvalidArgument, "request.version: must be \"1\""));
  request = Parse<pb::ExecutionRequest>(kExecutionRequest);
  request.mutable_message()->set_version("2");
  EXPECT_THAT(
      ValidateExecutionRequest(&request, "request"),
      StatusIs(absl::StatusCode::kInvalidArgument, "request.message.version: must be \"1\""));
  auto event = Parse<pb::ExecutionEvent>(kEvent);
  event.clear_version();
  EXPECT_THAT(ValidateExecutionEvent(&event, "event"),
              StatusIs(absl::StatusCode::kInvalidArgument, "event.version: must be \"1\""));
  auto result = Parse<pb::ExecutionResult>(kExecutionResult);
  result.mutable_events(0)->set_version("2");
  EXPECT_THAT(
      ValidateExecutionResult(&result, "result"),
      StatusIs(absl::StatusCode::kInvalidArgument, "result.events[0].version: must be \"1\""));
  auto catalog = Parse<pb::ToolCatalog>(kCatalog);
  catalog.set_version("2");
  EXPECT_THAT(ValidateToolCatalog(&catalog, "catalog"),
              StatusIs(absl::StatusCode::kInvalidArgument, "catalog.version: must be \"1\""));
  auto manifest = Parse<pb::RuntimeManifest>(kManifest);
  manifest.set_protocol_version("2");
  EXPECT_THAT(
      ValidateRuntimeManifest(&manifest, "manifest"),
      StatusIs(absl::StatusCode::kInvalidArgument, "manifest.protocol_version: must be \"1\""));
  auto audit = Parse<pb::AuditEvent>(kAuditEvent);
  audit.set_version("2");
  EXPECT_THAT(ValidateAuditEvent(&audit, "event"),
              StatusIs(absl::StatusCode::kInvalidArgument, "event.version: must be \"1\""));
}

// ---- common.proto ----

TEST(AddressTest, Cases) {
  RunCases<pb::Address>(
      R"pb(agent_id: "alice")pb", ValidateAddress, "actor",
      {
          {"no kind", [](pb::Address& a) { a.Clear(); }, "actor: no kind set"},
          {"human", [](pb::Address& a) { a.set_human_user_id("u"); }, ""},
          {"group", [](pb::Address& a) { a.set_group_conversation_id("g"); }, ""},
          {"service", [](pb::Address& a) { a.set_service_id("s"); }, ""},
          {"blank", [](pb::Address& a) { a.set_agent_id("   "); }, "actor.agent_id: empty"},
          {"256", [](pb::Address& a) { a.set_agent_id(Pad(256)); }, ""},
          {"257", [](pb::Address& a) { a.set_service_id(Pad(257)); },
           "actor.service_id: longer than 256"},
      });
}

TEST(AddressTest, TrimsInPlace) {
  pb::Address address;
  address.set_human_user_id(" bob\t");
  ASSERT_THAT(ValidateAddress(&address, "a"), IsOk());
  EXPECT_EQ(address.human_user_id(), "bob");
}

TEST(ResourceRefTest, Cases) {
  const auto segments = [](int n) {
    return [n](pb::ResourceRef& r) {
      r.clear_path();
      for (int i = 0; i < n; ++i) r.add_path("s");
    };
  };
  RunCases<pb::ResourceRef>(
      R"pb(namespace: "files" path: "docs")pb", ValidateResourceRef, "resource",
      {
          {"no path", segments(0), ""},
          {"64 segments", segments(64), ""},
          {"65 segments", segments(65), "resource.path: more than 64"},
          {"blank namespace", [](pb::ResourceRef& r) { r.set_namespace_("  "); },
           "resource.namespace: empty"},
          {"segment 256", [](pb::ResourceRef& r) { r.add_path(Pad(256)); }, ""},
          {"segment 257", [](pb::ResourceRef& r) { r.add_path(Pad(257)); },
           "resource.path[1]: longer than 256"},
          {"empty segment", [](pb::ResourceRef& r) { r.add_path(""); }, "resource.path[1]: empty"},
          {"dot", [](pb::ResourceRef& r) { r.add_path("."); }, "resource.path[1]: is \".\""},
          {"dot dot", [](pb::ResourceRef& r) { r.set_path(0, ".."); },
           "resource.path[0]: is \"..\""},
          {"slash", [](pb::ResourceRef& r) { r.add_path("a/b"); },
           "resource.path[1]: contains '/'"},
          {"backslash", [](pb::ResourceRef& r) { r.add_path("a\\b"); },
           "resource.path[1]: contains '\\'"},
          {"control", [](pb::ResourceRef& r) { r.add_path("a\x1b"); },
           "resource.path[1]: contains control character U+001B"},
          {"delete", [](pb::ResourceRef& r) { r.add_path("\x7f"); },
           "resource.path[1]: contains control character U+007F"},
          {"leading space", [](pb::ResourceRef& r) { r.add_path(" a"); },
           "resource.path[1]: leading or trailing whitespace"},
          {"trailing space", [](pb::ResourceRef& r) { r.add_path("a "); },
           "resource.path[1]: leading or trailing whitespace"},
          {"inner space", [](pb::ResourceRef& r) { r.add_path("a b"); }, ""},
          {"owner without kind", [](pb::ResourceRef& r) { r.mutable_owner(); },
           "resource.owner: no kind set"},
          {"owner", [](pb::ResourceRef& r) { r.mutable_owner()->set_agent_id("x"); }, ""},
      });
}

TEST(ResourceRefTest, SegmentsAreNotTrimmedNamespaceIs) {
  auto ref = Parse<pb::ResourceRef>(R"pb(namespace: " files " path: "docs")pb");
  ASSERT_THAT(ValidateResourceRef(&ref, "r"), IsOk());
  EXPECT_EQ(ref.namespace_(), "files");
  ref.set_path(0, " docs");
  EXPECT_THAT(
      ValidateResourceRef(&ref, "r"),
      StatusIs(absl::StatusCode::kInvalidArgument, "r.path[0]: leading or trailing whitespace"));
  EXPECT_EQ(ref.path(0), " docs");
}

TEST(CapabilityTest, Cases) {
  const auto actions = [](int n) {
    return [n](pb::Capability& c) {
      c.clear_actions();
      for (int i = 0; i < n; ++i) c.add_actions(absl::StrCat("a", i));
    };
  };
  RunCases<pb::Capability>(
      kCapability, ValidateCapability, "capability",
      {
          {"64 actions", actions(64), ""},
          {"65 actions", actions(65), "capability.actions: more than 64"},
          {"no actions", actions(0), "capability.actions: empty"},
          {"action 128", [](pb::Capability& c) { c.set_actions(0, Pad(128)); }, ""},
          {"action 129", [](pb::Capability& c) { c.set_actions(0, Pad(129)); },
           "capability.actions[0]: longer than 128"},
          {"blank action", [](pb::Capability& c) { c.add_actions(" \t"); },
           "capability.actions[1]: empty"},
          {"wildcard", [](pb::Capability& c) { c.set_actions(0, "*"); }, ""},
          {"scope unspecified", [](pb::Capability& c) { c.set_scope(pb::SCOPE_UNSPECIFIED); },
           "capability.scope: unspecified"},
          {"scope unknown", [](pb::Capability& c) { c.set_scope(static_cast<pb::Scope>(7)); },
           "capability.scope: unknown value 7"},
          {"no resource", [](pb::Capability& c) { c.clear_resource(); },
           "capability.resource: required"},
          {"resource error", [](pb::Capability& c) { c.mutable_resource()->add_path(".."); },
           "capability.resource.path[2]: is \"..\""},
      });
}

TEST(CapabilityTest, TrimsActions) {
  auto capability = Parse<pb::Capability>(kCapability);
  capability.set_actions(0, "  write ");
  ASSERT_THAT(ValidateCapability(&capability, "c"), IsOk());
  EXPECT_EQ(capability.actions(0), "write");
}

TEST(CapabilityConstraintsTest, Cases) {
  const auto purposes = [](int n) {
    return [n](pb::CapabilityConstraints& c) {
      for (int i = 0; i < n; ++i) c.add_purposes(absl::StrCat("p", i));
    };
  };
  using C = pb::CapabilityConstraints;
  RunCases<C>(
      "", ValidateCapabilityConstraints, "constraints",
      {
          {"empty", [](C&) {}, ""},
          {"64 purposes", purposes(64), ""},
          {"65 purposes", purposes(65), "constraints.purposes: more than 64"},
          {"purpose 512", [](C& c) { c.add_purposes(Pad(512)); }, ""},
          {"purpose 513", [](C& c) { c.add_purposes(Pad(513)); },
           "constraints.purposes[0]: longer than 512"},
          {"blank purpose", [](C& c) { c.add_purposes("  "); }, "constraints.purposes[0]: empty"},
          {"window",
           [](C& c) {
             c.mutable_not_before()->set_seconds(10);
             c.mutable_expires_at()->set_seconds(20);
           },
           ""},
          {"instant window",
           [](C& c) {
             c.mutable_not_before()->set_seconds(10);
             c.mutable_expires_at()->set_seconds(10);
           },
           ""},
          {"inverted window",
           [](C& c) {
             c.mutable_not_before()->set_seconds(10);
             c.mutable_not_before()->set_nanos(1);
             c.mutable_expires_at()->set_seconds(10);
           },
           "constraints.not_before: later than expires_at"},
          {"bad expiry", [](C& c) { c.mutable_expires_at()->set_nanos(-1); },
           "constraints.expires_at: nanos out of range (0 .. 999999999)"},
          {"bad not_before",
           [](C& c) { c.mutable_not_before()->set_seconds(kMaxTimestampSeconds + 1); },
           "constraints.not_before: seconds out of range (0001-01-01 .. "
           "9999-12-31)"},
          {"max_uses 1", [](C& c) { c.set_max_uses(1); }, ""},
          {"max_uses 0", [](C& c) { c.set_max_uses(0); }, "constraints.max_uses: must be positive"},
          {"max_uses -1", [](C& c) { c.set_max_uses(-1); },
           "constraints.max_uses: must be positive"},
          {"depth 0", [](C& c) { c.set_delegation_depth(0); }, ""},
          {"depth -1", [](C& c) { c.set_delegation_depth(-1); },
           "constraints.delegation_depth: must be non-negative"},
      });
}

TEST(CapabilityRequirementTest, Cases) {
  using R = pb::CapabilityRequirement;
  RunCases<R>(
      R"pb(resource { namespace: "files" }
           action: "read")pb",
      ValidateCapabilityRequirement, "requirement",
      {
          {"no action", [](R& r) { r.clear_action(); }, "requirement.action: empty"},
          {"action 129", [](R& r) { r.set_action(Pad(129)); },
           "requirement.action: longer than 128"},
          {"no resource", [](R& r) { r.clear_resource(); }, "requirement.resource: required"},
      });
}

TEST(ProtocolErrorTest, Cases) {
  using E = pb::ProtocolError;
  RunCases<E>(
      R"pb(code: "no_matching_grant" message: "No grant matches.")pb", ValidateProtocolError,
      "error",
      {
          {"message 4096", [](E& e) { e.set_message(Pad(4096)); }, ""},
          {"message 4097", [](E& e) { e.set_message(Pad(4097)); },
           "error.message: longer than 4096"},
          {"no message", [](E& e) { e.clear_message(); }, "error.message: empty"},
          {"blank code", [](E& e) { e.set_code(" "); }, "error.code: empty"},
          {"details",
           [](E& e) { (*e.mutable_details()->mutable_fields())["k"].set_bool_value(true); }, ""},
          {"details NaN",
           [](E& e) {
             (*e.mutable_details()->mutable_fields())["k"].set_number_value(std::nan(""));
           },
           "error.details[\"k\"]: not a finite number"},
      });
}

// ---- context.proto ----

TEST(AccessContextTest, Cases) {
  const auto namespaces = [](int n) {
    return [n](pb::AccessContext& c) {
      c.clear_enabled_tool_namespaces();
      for (int i = 0; i < n; ++i) {
        c.add_enabled_tool_namespaces(absl::StrCat("ns", i));
      }
    };
  };
  using C = pb::AccessContext;
  RunCases<C>(
      kContext, ValidateAccessContext, "context",
      {
          {"purpose 512", [](C& c) { c.set_purpose(Pad(512)); }, ""},
          {"purpose 513", [](C& c) { c.set_purpose(Pad(513)); },
           "context.purpose: longer than 512"},
          {"blank purpose", [](C& c) { c.set_purpose("   "); }, "context.purpose: empty"},
          {"256 namespaces", namespaces(256), ""},
          {"257 namespaces", namespaces(257), "context.enabled_tool_namespaces: more than 256"},
          {"no namespaces", namespaces(0), ""},
          {"duplicate namespace", [](C& c) { c.add_enabled_tool_namespaces("files"); },
           "context.enabled_tool_namespaces[1]: duplicate \"files\""},
          {"duplicate after trim", [](C& c) { c.add_enabled_tool_namespaces(" files "); },
           "context.enabled_tool_namespaces[1]: duplicate \"files\""},
          {"blank namespace", [](C& c) { c.add_enabled_tool_namespaces(""); },
           "context.enabled_tool_namespaces[1]: empty"},
          {"no namespace_id", [](C& c) { c.clear_namespace_id(); }, "context.namespace_id: empty"},
          {"namespace_id 257", [](C& c) { c.set_namespace_id(Pad(257)); },
           "context.namespace_id: longer than 256"},
          {"no actor", [](C& c) { c.clear_actor(); }, "context.actor: required"},
          {"actor without kind", [](C& c) { c.mutable_actor()->Clear(); },
           "context.actor: no kind set"},
          {"no authority", [](C& c) { c.clear_authority(); }, "context.authority: required"},
          {"no owner", [](C& c) { c.clear_owner(); }, "context.owner: required"},
          {"no trace", [](C& c) { c.set_trace_id("\t"); }, "context.trace_id: empty"},
          {"no now", [](C& c) { c.clear_now(); }, "context.now: required"},
          {"bad now", [](C& c) { c.mutable_now()->set_nanos(1000000000); },
           "context.now: nanos out of range (0 .. 999999999)"},
      });
}

TEST(AccessContextTest, TrimsIdentifiersAndPurpose) {
  auto context = Parse<pb::AccessContext>(kContext);
  context.set_namespace_id(" world-1 ");
  context.set_purpose("\ttriage ");
  context.set_enabled_tool_namespaces(0, " files");
  context.mutable_actor()->set_agent_id(" alice ");
  ASSERT_THAT(ValidateAccessContext(&context, "context"), IsOk());
  EXPECT_EQ(context.namespace_id(), "world-1");
  EXPECT_EQ(context.purpose(), "triage");
  EXPECT_EQ(context.enabled_tool_namespaces(0), "files");
  EXPECT_EQ(context.actor().agent_id(), "alice");
}

// ---- grant.proto ----

TEST(CapabilityGrantTest, Cases) {
  const auto capabilities = [](int n) {
    return [n](pb::CapabilityGrant& g) {
      const pb::Capability first = g.capabilities(0);
      g.clear_capabilities();
      for (int i = 0; i < n; ++i) *g.add_capabilities() = first;
    };
  };
  // 128 emoji are 256 UTF-16 units.
  std::string emoji;
  for (int i = 0; i < 128; ++i) emoji += "\xF0\x9F\x98\x80";
  using G = pb::CapabilityGrant;
  RunCases<G>(
      kGrant, ValidateCapabilityGrant, "grant",
      {
          {"id 256", [](G& g) { g.set_id(Pad(256)); }, ""},
          {"id 257", [](G& g) { g.set_id(Pad(257)); }, "grant.id: longer than 256"},
          {"id 256 units", [&](G& g) { g.set_id(emoji); }, ""},
          {"id 257 units", [&](G& g) { g.set_id(emoji + "a"); }, "grant.id: longer than 256"},
          {"id invalid UTF-8", [](G& g) { g.set_id("a\xC0\x80"); }, "grant.id: invalid UTF-8"},
          {"blank id", [](G& g) { g.set_id("    "); }, "grant.id: empty"},
          {"64 capabilities", capabilities(64), ""},
          {"65 capabilities", capabilities(65), "grant.capabilities: more than 64"},
          {"no capabilities", capabilities(0), "grant.capabilities: empty"},
          {"scope unspecified", [](G& g) { g.mutable_capabilities(0)->clear_scope(); },
           "grant.capabilities[0].scope: unspecified"},
          {"second capability action",
           [](G& g) {
             *g.add_capabilities() = g.capabilities(0);
             g.mutable_capabilities(1)->set_actions(0, Pad(129));
           },
           "grant.capabilities[1].actions[0]: longer than 128"},
          {"no subject", [](G& g) { g.clear_subject(); }, "grant.subject: required"},
          {"no issuer", [](G& g) { g.clear_issuer(); }, "grant.issuer: required"},
          {"no constraints", [](G& g) { g.clear_constraints(); }, "grant.constraints: required"},
          {"constraints", [](G& g) { g.mutable_constraints()->set_max_uses(0); },
           "grant.constraints.max_uses: must be positive"},
          {"no issued_at", [](G& g) { g.clear_issued_at(); }, "grant.issued_at: required"},
          {"revoked", [](G& g) { g.mutable_revoked_at()->set_seconds(1); }, ""},
          {"bad revoked_at",
           [](G& g) { g.mutable_revoked_at()->set_seconds(kMinTimestampSeconds - 1); },
           "grant.revoked_at: seconds out of range (0001-01-01 .. "
           "9999-12-31)"},
          {"parent", [](G& g) { g.set_parent_grant_id("grant-0"); }, ""},
          {"parent is self", [](G& g) { g.set_parent_grant_id("grant-1"); },
           "grant.parent_grant_id: must differ from id"},
          {"parent is self after trim", [](G& g) { g.set_parent_grant_id(" grant-1 "); },
           "grant.parent_grant_id: must differ from id"},
          {"blank parent", [](G& g) { g.set_parent_grant_id("  "); },
           "grant.parent_grant_id: empty"},
          {"metadata Infinity",
           [](G& g) { (*g.mutable_metadata()->mutable_fields())["x"].set_number_value(HUGE_VAL); },
           "grant.metadata[\"x\"]: not a finite number"},
      });
}

TEST(CapabilityRequestTest, Cases) {
  using R = pb::CapabilityRequest;
  RunCases<R>(
      kCapabilityRequest, ValidateCapabilityRequest, "request",
      {
          {"constraints", [](R& r) { r.mutable_constraints()->add_purposes("x"); }, ""},
          {"bad constraints", [](R& r) { r.mutable_constraints()->set_delegation_depth(-1); },
           "request.constraints.delegation_depth: must be non-negative"},
          {"no requester", [](R& r) { r.clear_requester(); }, "request.requester: required"},
          {"no owner", [](R& r) { r.clear_owner(); }, "request.owner: required"},
          {"no capabilities", [](R& r) { r.clear_capabilities(); }, "request.capabilities: empty"},
          {"purpose 513", [](R& r) { r.set_purpose(Pad(513)); },
           "request.purpose: longer than 512"},
          {"no requested_at", [](R& r) { r.clear_requested_at(); },
           "request.requested_at: required"},
      });
}

TEST(AuthorizationDecisionTest, Cases) {
  using D = pb::AuthorizationDecision;
  const auto required_authority = [](D& d) {
    *d.mutable_required_authority() = Parse<pb::CapabilityRequest>(kCapabilityRequest);
  };
  RunCases<D>(R"pb(allowed: false reason_code: "no_matching_grant")pb",
              ValidateAuthorizationDecision, "decision",
              {
                  {"no reason", [](D& d) { d.clear_reason_code(); }, "decision.reason_code: empty"},
                  {"matched", [](D& d) { d.set_matched_grant_id("grant-1"); }, ""},
                  {"blank matched", [](D& d) { d.set_matched_grant_id(" "); },
                   "decision.matched_grant_id: empty"},
                  {"required_authority", required_authority, ""},
                  {"bad required_authority",
                   [&](D& d) {
                     required_authority(d);
                     d.mutable_required_authority()->clear_capabilities();
                   },
                   "decision.required_authority.capabilities: empty"},
              });
}

TEST(EscalationTest, Cases) {
  using E = pb::Escalation;
  RunCases<E>(
      kEscalation, ValidateEscalation, "escalation",
      {
          {"reason 512", [](E& e) { e.set_reason(" " + Pad(512) + " "); }, ""},
          {"reason 513", [](E& e) { e.set_reason(Pad(513)); },
           "escalation.reason: longer than 512"},
          {"blank reason", [](E& e) { e.set_reason(" \n "); }, "escalation.reason: empty"},
          {"no reviewer", [](E& e) { e.clear_reviewer(); }, "escalation.reviewer: required"},
          {"no requested_at", [](E& e) { e.clear_requested_at(); },
           "escalation.requested_at: required"},
          {"status unspecified", [](E& e) { e.clear_status(); }, "escalation.status: unspecified"},
          {"requested_authority",
           [](E& e) {
             *e.mutable_requested_authority() = Parse<pb::CapabilityRequest>(kCapabilityRequest);
           },
           ""},
          {"bad requested_authority", [](E& e) { e.mutable_requested_authority(); },
           "escalation.requested_authority.id: empty"},
      });
}

TEST(ReachResultTest, Cases) {
  using R = pb::ReachResult;
  RunCases<R>(
      R"pb(status: REACH_STATUS_COMPUTED
           reach { namespace: "files" path: "docs" actions: "read" scope: SCOPE_DESCENDANTS })pb",
      ValidateReachResult, "reach",
      {
          {"status unspecified", [](R& r) { r.clear_status(); }, "reach.status: unspecified"},
          {"computed with reason", [](R& r) { r.set_reason_code("authority_unavailable"); },
           "reach.reason_code: not allowed when status is computed"},
          {"entry without actions", [](R& r) { r.mutable_reach(0)->clear_actions(); },
           "reach.reach[0].actions: empty"},
          {"unavailable with entries", [](R& r) { r.set_status(pb::REACH_STATUS_UNAVAILABLE); },
           "reach.reach: not allowed when status is unavailable"},
          {"unavailable",
           [](R& r) {
             r.set_status(pb::REACH_STATUS_UNAVAILABLE);
             r.clear_reach();
             r.set_reason_code("usage_store_unavailable");
           },
           ""},
          {"unavailable with other reason",
           [](R& r) {
             r.set_status(pb::REACH_STATUS_UNAVAILABLE);
             r.clear_reach();
             r.set_reason_code("no_matching_grant");
           },
           "reach.reason_code: must be authority_unavailable or "
           "usage_store_unavailable"},
      });
}

// ---- message.proto ----

TEST(MessageEnvelopeTest, Cases) {
  const auto parents = [](int n) {
    return [n](pb::MessageEnvelope& e) {
      e.mutable_provenance()->set_source("relay");
      for (int i = 0; i < n; ++i) {
        e.mutable_provenance()->add_parent_ids(absl::StrCat("m", i));
      }
    };
  };
  using E = pb::MessageEnvelope;
  RunCases<E>(
      kEnvelope, ValidateMessageEnvelope, "envelope",
      {
          {"version 2", [](E& e) { e.set_version("2"); }, "envelope.version: must be \"1\""},
          {"no id", [](E& e) { e.clear_id(); }, "envelope.id: empty"},
          {"no sender", [](E& e) { e.clear_sender(); }, "envelope.sender: required"},
          {"no receiver", [](E& e) { e.clear_receiver(); }, "envelope.receiver: required"},
          {"purpose 513", [](E& e) { e.set_purpose(Pad(513)); },
           "envelope.purpose: longer than 512"},
          {"no payload", [](E& e) { e.clear_payload(); }, "envelope.payload: required"},
          {"null payload",
           [](E& e) { e.mutable_payload()->set_null_value(google::protobuf::NULL_VALUE); }, ""},
          {"unset payload", [](E& e) { e.mutable_payload()->Clear(); },
           "envelope.payload: no value set"},
          {"no trace", [](E& e) { e.clear_trace_id(); }, "envelope.trace_id: empty"},
          {"no created_at", [](E& e) { e.clear_created_at(); }, "envelope.created_at: required"},
          {"reply_to", [](E& e) { e.set_reply_to("msg-0"); }, ""},
          {"blank reply_to", [](E& e) { e.set_reply_to(" "); }, "envelope.reply_to: empty"},
          {"64 parents", parents(64), ""},
          {"65 parents", parents(65), "envelope.provenance.parent_ids: more than 64"},
          {"provenance without source", [](E& e) { e.mutable_provenance(); },
           "envelope.provenance.source: empty"},
      });
}

// ---- tool.proto ----

TEST(ToolDefinitionTest, Cases) {
  using T = pb::ToolDefinition;
  const std::string invalid = " (allowed: A-Z a-z 0-9 _ . -)";
  RunCases<T>(
      kToolDefinition, ValidateToolDefinition, "tool",
      {
          {"name 128", [](T& t) { t.set_name(Pad(128)); }, ""},
          {"name 129", [](T& t) { t.set_name(Pad(129)); }, "tool.name: longer than 128"},
          {"no name", [](T& t) { t.clear_name(); }, "tool.name: empty"},
          {"name with space", [](T& t) { t.set_name("files read"); },
           "tool.name: invalid character at offset 5" + invalid},
          {"name not trimmed", [](T& t) { t.set_name(" files.read"); },
           "tool.name: invalid character at offset 0" + invalid},
          {"description 8192", [](T& t) { t.set_description(Pad(8192)); }, ""},
          {"description 8193", [](T& t) { t.set_description(Pad(8193)); },
           "tool.description: longer than 8192"},
          {"no description", [](T& t) { t.clear_description(); }, "tool.description: empty"},
          {"blank namespace", [](T& t) { t.set_namespace_(" "); }, "tool.namespace: empty"},
          {"no source", [](T& t) { t.clear_source(); }, "tool.source: empty"},
          {"read_write unspecified", [](T& t) { t.clear_read_write(); },
           "tool.read_write: unspecified"},
          {"no input_schema", [](T& t) { t.clear_input_schema(); }, "tool.input_schema: required"},
          {"output_schema NaN",
           [](T& t) {
             (*t.mutable_output_schema()->mutable_fields())["max"].set_number_value(-HUGE_VAL);
           },
           "tool.output_schema[\"max\"]: not a finite number"},
          {"no required_capability", [](T& t) { t.clear_required_capability(); },
           "tool.required_capability: required"},
          {"bad required_capability", [](T& t) { t.mutable_required_capability()->set_action(""); },
           "tool.required_capability.action: empty"},
          {"read, destructive", [](T& t) { t.mutable_annotations()->set_destructive(true); },
           "tool.annotations.destructive: a read tool cannot be destructive"},
          {"read, not destructive", [](T& t) { t.mutable_annotations()->set_destructive(false); },
           ""},
          {"read, read_only", [](T& t) { t.mutable_annotations()->set_read_only(true); }, ""},
          {"write, read_only",
           [](T& t) {
             t.set_read_write(pb::READ_WRITE_WRITE);
             t.mutable_annotations()->set_read_only(true);
           },
           "tool.annotations.read_only: a write tool cannot be read_only"},
          {"write, destructive",
           [](T& t) {
             t.set_read_write(pb::READ_WRITE_WRITE);
             t.mutable_annotations()->set_destructive(true);
           },
           ""},
      });
}

TEST(PublishedToolDefinitionTest, Cases) {
  using T = pb::PublishedToolDefinition;
  RunCases<T>(
      kPublishedTool, ValidatePublishedToolDefinition, "tool",
      {
          {"name 129", [](T& t) { t.set_name(Pad(129)); }, "tool.name: longer than 128"},
          {"description 8193", [](T& t) { t.set_description(Pad(8193)); },
           "tool.description: longer than 8192"},
          {"no input_schema", [](T& t) { t.clear_input_schema(); }, "tool.input_schema: required"},
          {"no metadata", [](T& t) { t.clear_metadata(); }, ""},
          {"metadata without ids", [](T& t) { t.mutable_metadata()->Clear(); }, ""},
          {"blank metadata namespace", [](T& t) { t.mutable_metadata()->set_namespace_(" "); },
           "tool.metadata.namespace: empty"},
      });
}

TEST(ToolCatalogTest, Cases) {
  const auto tools = [](int n) {
    return [n](pb::ToolCatalog& c) {
      c.clear_tools();
      for (int i = 0; i < n; ++i) {
        pb::PublishedToolDefinition* tool = c.add_tools();
        tool->set_name(ToolName(i));
        tool->set_description("d");
        tool->mutable_input_schema();
      }
    };
  };
  using C = pb::ToolCatalog;
  RunCases<C>(
      kCatalog, ValidateToolCatalog, "catalog",
      {
          {"no tools", tools(0), ""},
          {"512 tools", tools(512), ""},
          {"513 tools", tools(513), "catalog.tools: more than 512"},
          {"no execution_id", [](C& c) { c.clear_execution_id(); }, "catalog.execution_id: empty"},
          {"uppercase hash", [](C& c) { c.set_catalog_hash(std::string(64, 'A')); },
           "catalog.catalog_hash: must be 64 lowercase hex digits"},
          {"short hash", [](C& c) { c.set_catalog_hash(std::string(63, 'a')); },
           "catalog.catalog_hash: must be 64 lowercase hex digits"},
          {"duplicate", [](C& c) { c.mutable_tools(1)->set_name("a.read"); },
           "catalog.tools[1].name: duplicate \"a.read\""},
          {"unsorted",
           [](C& c) {
             c.mutable_tools(0)->set_name("b.write");
             c.mutable_tools(1)->set_name("a.read");
           },
           "catalog.tools[1].name: not sorted (\"a.read\" after \"b.write\")"},
          {"code unit order",  // 'B' (0x42) sorts before 'a' (0x61).
           [](C& c) {
             c.mutable_tools(0)->set_name("B.write");
             c.mutable_tools(1)->set_name("a.read");
           },
           ""},
          {"code unit order violated", [](C& c) { c.mutable_tools(1)->set_name("B.write"); },
           "catalog.tools[1].name: not sorted (\"B.write\" after \"a.read\")"},
          {"bad tool", [](C& c) { c.mutable_tools(1)->clear_description(); },
           "catalog.tools[1].description: empty"},
      });
}

TEST(ToolCallTest, Cases) {
  using T = pb::ToolCall;
  RunCases<T>(
      kToolCall, ValidateToolCall, "call",
      {
          {"blank tool", [](T& t) { t.set_tool("  "); }, "call.tool: empty"},
          {"tool is any identifier", [](T& t) { t.set_tool("not a tool/name!"); }, ""},
          {"tool 256", [](T& t) { t.set_tool(Pad(256)); }, ""},
          {"tool 257", [](T& t) { t.set_tool(Pad(257)); }, "call.tool: longer than 256"},
          {"no id", [](T& t) { t.clear_id(); }, "call.id: empty"},
          {"no arguments", [](T& t) { t.clear_arguments(); }, "call.arguments: required"},
          {"arguments NaN",
           [](T& t) {
             (*t.mutable_arguments()->mutable_fields())["n"].set_number_value(std::nan(""));
           },
           "call.arguments[\"n\"]: not a finite number"},
          {"no trace", [](T& t) { t.clear_trace_id(); }, "call.trace_id: empty"},
          {"no requested_at", [](T& t) { t.clear_requested_at(); }, "call.requested_at: required"},
      });
}

TEST(ToolCallTest, TrimsTool) {
  auto call = Parse<pb::ToolCall>(kToolCall);
  call.set_tool(" files.read ");
  ASSERT_THAT(ValidateToolCall(&call, "call"), IsOk());
  EXPECT_EQ(call.tool(), "files.read");
}

TEST(ToolResultTest, Cases) {
  using R = pb::ToolResult;
  const auto error = [](R& r) {
    r.mutable_error()->set_code("no_matching_grant");
    r.mutable_error()->set_message("denied");
  };
  RunCases<R>(
      kToolResult, ValidateToolResult, "result",
      {
          {"status unspecified", [](R& r) { r.clear_status(); }, "result.status: unspecified"},
          {"succeeded without output", [](R& r) { r.clear_output(); },
           "result.output: required when status is succeeded"},
          {"succeeded with error", error, "result.error: not allowed when status is succeeded"},
          {"denied with error",
           [&](R& r) {
             r.set_status(pb::TOOL_RESULT_STATUS_DENIED);
             error(r);
           },
           ""},
          {"failed with error",
           [&](R& r) {
             r.set_status(pb::TOOL_RESULT_STATUS_FAILED);
             error(r);
           },
           ""},
          {"denied without error",
           [](R& r) {
             r.set_status(pb::TOOL_RESULT_STATUS_DENIED);
             r.clear_output();
           },
           "result.error: required when status is denied"},
          {"failed with output", [](R& r) { r.set_status(pb::TOOL_RESULT_STATUS_FAILED); },
           "result.output: not allowed when status is failed"},
          {"bad error",
           [](R& r) {
             r.set_status(pb::TOOL_RESULT_STATUS_FAILED);
             r.mutable_error()->set_code("tool_failed");
           },
           "result.error.message: empty"},
          {"unset output", [](R& r) { r.mutable_output()->Clear(); },
           "result.output: no value set"},
          {"no call_id", [](R& r) { r.clear_call_id(); }, "result.call_id: empty"},
          {"no completed_at", [](R& r) { r.clear_completed_at(); },
           "result.completed_at: required"},
      });
}

// ---- execution.proto ----

TEST(ExecutionOptionsTest, Cases) {
  using O = pb::ExecutionOptions;
  RunCases<O>(
      "", ValidateExecutionOptions, "options",
      {
          {"absent", [](O&) {}, ""},
          {"steps 1", [](O& o) { o.set_max_steps(1); }, ""},
          {"steps 1000", [](O& o) { o.set_max_steps(1000); }, ""},
          {"steps 1001", [](O& o) { o.set_max_steps(1001); },
           "options.max_steps: must be in 1..1000"},
          {"steps 0", [](O& o) { o.set_max_steps(0); }, "options.max_steps: must be in 1..1000"},
          {"calls 1", [](O& o) { o.set_max_tool_calls(1); }, ""},
          {"calls 10000", [](O& o) { o.set_max_tool_calls(10000); }, ""},
          {"calls 10001", [](O& o) { o.set_max_tool_calls(10001); },
           "options.max_tool_calls: must be in 1..10000"},
          {"calls 0", [](O& o) { o.set_max_tool_calls(0); },
           "options.max_tool_calls: must be in 1..10000"},
          {"timeout 1", [](O& o) { o.set_timeout_ms(1); }, ""},
          {"timeout 600000", [](O& o) { o.set_timeout_ms(600000); }, ""},
          {"timeout 600001", [](O& o) { o.set_timeout_ms(600001); },
           "options.timeout_ms: must be in 1..600000"},
          {"timeout -1", [](O& o) { o.set_timeout_ms(-1); },
           "options.timeout_ms: must be in 1..600000"},
      });
}

TEST(ExecutionRequestTest, Cases) {
  const auto tools = [](int n) {
    return [n](pb::ExecutionRequest& r) {
      r.clear_tools();
      for (int i = 0; i < n; ++i) r.add_tools(ToolName(i));
    };
  };
  using R = pb::ExecutionRequest;
  RunCases<R>(
      kExecutionRequest, ValidateExecutionRequest, "request",
      {
          {"version 2", [](R& r) { r.set_version("2"); }, "request.version: must be \"1\""},
          {"no execution_id", [](R& r) { r.clear_execution_id(); }, "request.execution_id: empty"},
          {"no agent", [](R& r) { r.clear_agent(); }, "request.agent: required"},
          {"human agent", [](R& r) { r.mutable_agent()->set_human_user_id("bob"); },
           "request.agent: must be an agent address"},
          {"blank agent", [](R& r) { r.mutable_agent()->set_agent_id(" "); },
           "request.agent.agent_id: empty"},
          {"no context", [](R& r) { r.clear_context(); }, "request.context: required"},
          {"context purpose 513", [](R& r) { r.mutable_context()->set_purpose(Pad(513)); },
           "request.context.purpose: longer than 512"},
          {"no message", [](R& r) { r.clear_message(); }, "request.message: required"},
          {"message receiver", [](R& r) { r.mutable_message()->clear_receiver(); },
           "request.message.receiver: required"},
          {"no tools", tools(0), ""},
          {"512 tools", tools(512), ""},
          {"513 tools", tools(513), "request.tools: more than 512"},
          {"tool name 128", [](R& r) { r.add_tools(Pad(128)); }, ""},
          {"tool name 129", [](R& r) { r.add_tools(Pad(129)); },
           "request.tools[1]: longer than 128"},
          {"bad tool name", [](R& r) { r.add_tools("a:b"); },
           "request.tools[1]: invalid character at offset 1 (allowed: A-Z "
           "a-z 0-9 _ . -)"},
          {"options", [](R& r) { r.mutable_options()->set_max_steps(1001); },
           "request.options.max_steps: must be in 1..1000"},
          {"state Infinity",
           [](R& r) { (*r.mutable_state()->mutable_fields())["s"].set_number_value(HUGE_VAL); },
           "request.state[\"s\"]: not a finite number"},
          {"metadata", [](R& r) { (*r.mutable_metadata()->mutable_fields())["m"]; },
           "request.metadata[\"m\"]: no value set"},
      });
}

TEST(ExecutionEventTest, Cases) {
  using E = pb::ExecutionEvent;
  RunCases<E>(
      kEvent, ValidateExecutionEvent, "event",
      {
          {"sequence 1", [](E& e) { e.set_sequence(1); }, ""},
          {"sequence -1", [](E& e) { e.set_sequence(-1); }, "event.sequence: must be non-negative"},
          {"type 128", [](E& e) { e.set_type(Pad(128)); }, ""},
          {"type 129", [](E& e) { e.set_type(Pad(129)); }, "event.type: longer than 128"},
          {"blank type", [](E& e) { e.set_type("   "); }, "event.type: empty"},
          {"no event_id", [](E& e) { e.clear_event_id(); }, "event.event_id: empty"},
          {"no data", [](E& e) { e.clear_data(); }, "event.data: required"},
          {"no occurred_at", [](E& e) { e.clear_occurred_at(); }, "event.occurred_at: required"},
      });
}

TEST(ExecutionEventTest, TrimsType) {
  auto event = Parse<pb::ExecutionEvent>(kEvent);
  event.set_type(" tool.requested\n");
  ASSERT_THAT(ValidateExecutionEvent(&event, "event"), IsOk());
  EXPECT_EQ(event.type(), "tool.requested");
}

TEST(ExecutionResultTest, Cases) {
  using R = pb::ExecutionResult;
  const auto error = [](R& r) {
    r.mutable_error()->set_code("runtime_failed");
    r.mutable_error()->set_message("The runtime failed.");
  };
  const auto escalation = [](R& r) {
    *r.mutable_escalation() = Parse<pb::Escalation>(kEscalation);
  };
  const auto status = [](pb::ExecutionStatus s) { return [s](R& r) { r.set_status(s); }; };
  const auto both = [](std::function<void(R&)> a, std::function<void(R&)> b) {
    return [a, b](R& r) {
      a(r);
      b(r);
    };
  };
  RunCases<R>(
      kExecutionResult, ValidateExecutionResult, "result",
      {
          {"version 2", [](R& r) { r.set_version("2"); }, "result.version: must be \"1\""},
          {"status unspecified", status(pb::EXECUTION_STATUS_UNSPECIFIED),
           "result.status: unspecified"},
          {"status unknown", status(static_cast<pb::ExecutionStatus>(42)),
           "result.status: unknown value 42"},
          {"succeeded without output", [](R& r) { r.clear_output(); },
           "result.output: required when status is succeeded"},
          {"succeeded with error", error, "result.error: not allowed when status is succeeded"},
          {"denied", both(status(pb::EXECUTION_STATUS_DENIED), error), ""},
          {"denied without error", status(pb::EXECUTION_STATUS_DENIED),
           "result.output: not allowed when status is denied"},
          {"failed without outcome",
           both(status(pb::EXECUTION_STATUS_FAILED), [](R& r) { r.clear_output(); }),
           "result.error: required when status is failed"},
          {"failed", both(status(pb::EXECUTION_STATUS_FAILED), error), ""},
          {"escalated", both(status(pb::EXECUTION_STATUS_ESCALATED), escalation), ""},
          {"escalated with error", both(status(pb::EXECUTION_STATUS_ESCALATED), error),
           "result.error: not allowed when status is escalated"},
          {"escalated without escalation",
           both(status(pb::EXECUTION_STATUS_ESCALATED), [](R& r) { r.clear_output(); }),
           "result.escalation: required when status is escalated"},
          {"bad escalation",
           both(status(pb::EXECUTION_STATUS_ESCALATED),
                [](R& r) { r.mutable_escalation()->set_reason(" "); }),
           "result.escalation.reason: empty"},
          {"cancelled without outcome",
           both(status(pb::EXECUTION_STATUS_CANCELLED), [](R& r) { r.clear_output(); }), ""},
          {"cancelled with error", both(status(pb::EXECUTION_STATUS_CANCELLED), error), ""},
          {"cancelled with output", status(pb::EXECUTION_STATUS_CANCELLED),
           "result.output: not allowed when status is cancelled"},
          {"bad error",
           both(status(pb::EXECUTION_STATUS_FAILED),
                [](R& r) { r.mutable_error()->set_message(Pad(4097)); }),
           "result.error.code: empty"},
          {"bad event", [](R& r) { r.mutable_events(0)->set_type(""); },
           "result.events[0].type: empty"},
          {"no started_at", [](R& r) { r.clear_started_at(); }, "result.started_at: required"},
          {"no completed_at", [](R& r) { r.clear_completed_at(); },
           "result.completed_at: required"},
      });
}

TEST(RuntimeManifestTest, Cases) {
  using M = pb::RuntimeManifest;
  RunCases<M>(kManifest, ValidateRuntimeManifest, "manifest",
              {
                  {"no protocol_version", [](M& m) { m.clear_protocol_version(); },
                   "manifest.protocol_version: must be \"1\""},
                  {"no id", [](M& m) { m.clear_id(); }, "manifest.id: empty"},
                  {"blank version", [](M& m) { m.set_version(" "); }, "manifest.version: empty"},
              });
}

// ---- audit.proto ----

TEST(AuditEventTest, Cases) {
  using A = pb::AuditEvent;
  RunCases<A>(
      kAuditEvent, ValidateAuditEvent, "event",
      {
          {"type unspecified", [](A& a) { a.clear_type(); }, "event.type: unspecified"},
          {"outcome unspecified", [](A& a) { a.clear_outcome(); }, "event.outcome: unspecified"},
          {"no at", [](A& a) { a.clear_at(); }, "event.at: required"},
          {"no id", [](A& a) { a.set_id(" "); }, "event.id: empty"},
          {"no namespace_id", [](A& a) { a.clear_namespace_id(); }, "event.namespace_id: empty"},
          {"no owner", [](A& a) { a.clear_owner(); }, "event.owner: required"},
          {"purpose 513", [](A& a) { a.set_purpose(Pad(513)); }, "event.purpose: longer than 512"},
          {"no source", [](A& a) { a.clear_source(); }, ""},
          {"source unspecified", [](A& a) { a.set_source(pb::AUDIT_SOURCE_UNSPECIFIED); },
           "event.source: unspecified"},
          {"ended_by", [](A& a) { a.set_ended_by(pb::ENDED_BY_RUNTIME); }, ""},
          {"ended_by unspecified", [](A& a) { a.set_ended_by(pb::ENDED_BY_UNSPECIFIED); },
           "event.ended_by: unspecified"},
          {"optional ids",
           [](A& a) {
             a.set_action("read");
             a.set_grant_id("grant-1");
             a.set_authority_hash(std::string(64, 'a'));
             a.set_operation_id("call-1");
             a.set_tool("files.read");
             a.set_message_id("msg-1");
             a.set_reason("allowed");
             a.set_cause("not_offered");
             a.set_fail_closed(true);
             a.set_consumed(false);
           },
           ""},
          {"blank action", [](A& a) { a.set_action(" "); }, "event.action: empty"},
          {"tool 257", [](A& a) { a.set_tool(Pad(257)); }, "event.tool: longer than 256"},
          {"blank cause", [](A& a) { a.set_cause("\t"); }, "event.cause: empty"},
          {"bad resource",
           [](A& a) {
             a.mutable_resource()->set_namespace_("files");
             a.mutable_resource()->add_path("a/b");
           },
           "event.resource.path[0]: contains '/'"},
          {"receiver without kind", [](A& a) { a.mutable_receiver(); },
           "event.receiver: no kind set"},
          {"bad requested_authority",
           [](A& a) {
             *a.mutable_requested_authority() = Parse<pb::CapabilityRequest>(kCapabilityRequest);
             a.mutable_requested_authority()->clear_requested_at();
           },
           "event.requested_authority.requested_at: required"},
          {"metadata NaN",
           [](A& a) {
             google::protobuf::Value& v = (*a.mutable_metadata()->mutable_fields())["l"];
             v.mutable_list_value()->add_values()->set_number_value(std::nan(""));
           },
           "event.metadata[\"l\"][0]: not a finite number"},
      });
}

}  // namespace
}  // namespace sharedos::common::validation
