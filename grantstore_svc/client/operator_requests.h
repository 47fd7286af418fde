// The requests a person builds from text — sharedosctl's flags, the reviewer console's form and
// query fields: each value checked here (addresses, record types, outcomes, sources, integers,
// RFC 3339 times) and turned into the AuditLog filter or the GrantStore resolution it names.
// One builder for both, so that the CLI and the console ask the services the same thing. Pure.
#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_REQUESTS_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_REQUESTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::grantstore::client {

// An audit filter as text; an empty field filters on nothing.
struct AuditFilterFields {
  std::string namespace_id;
  std::string trace;
  std::string execution;
  std::string reason;
  // A protocol "1" type ("tool.invoked") or a control-plane type ("grant.issued").
  std::string type;
  std::string outcome;
  std::string source;
  // An address, "human:alice".
  std::string actor;
  // RFC 3339; `until` is exclusive.
  std::string since;
  std::string until;
};

// Errors: INVALID_ARGUMENT naming the value (the parsers of operator_names.h).
absl::StatusOr<audit::v1::AuditFilter> BuildAuditFilter(const AuditFilterFields& fields);

// An approval or denial as text; an empty field is not given.
struct ResolveEscalationFields {
  std::string id;
  // When given, must name the credential's principal (the grant store checks).
  std::string reviewer;
  // An admin deciding in the reviewer's stead.
  bool on_behalf = false;
  // Narrowing: RFC 3339 and an integer >= 1.
  std::string expires_at;
  std::string max_uses;
  std::string grant_id;
  // Sent as given; the grant store bounds it (INVALID_ARGUMENT "note: ...").
  std::string note;
  // How an error names a field: "--" for sharedosctl's flags ("--max_uses must be >= 1"), empty
  // for the console's form fields.
  std::string field_prefix;
};

// Errors: INVALID_ARGUMENT naming the field.
absl::StatusOr<grantstore::v1::ResolveEscalationRequest> BuildResolveEscalation(
    const ResolveEscalationFields& fields, grantstore::v1::EscalationDecision decision);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_REQUESTS_H_
