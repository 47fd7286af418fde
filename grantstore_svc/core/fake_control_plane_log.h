// Test helper: the audit log as the grant store's anchor sees it through AuditLog.Query, filtered
// on trace id and control-plane type as audit_svc filters (one page). Holds the grant store's
// records of the revisions added.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_FAKE_CONTROL_PLANE_LOG_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_FAKE_CONTROL_PLANE_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "capability/address.h"
#include "grantstore_svc/core/control_plane_events.h"
#include "grantstore_svc/core/record_anchor.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::grantstore::core::testing {

class FakeControlPlaneLog {
 public:
  // A grant.issued record of `revision`, written by `writer`.
  void Add(int64_t revision, const std::string& writer = "service:grantstore") {
    audit::v1::AuditRecord record;
    record.set_sequence(static_cast<int64_t>(records_.size()) + 1);
    audit::v1::ControlPlaneEvent* event = record.mutable_control_plane();
    event->set_type(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
    event->set_trace_id(RevisionTraceId(revision));
    event->set_purpose(kControlPlanePurpose);
    *event->mutable_writer() = *capability::AddressFromKey(writer);
    (*event->mutable_metadata()->mutable_fields())["revision"].set_number_value(
        static_cast<double>(revision));
    records_.push_back(record);
  }

  AuditQuery Query() {
    return
        [this](const audit::v1::QueryRequest& request) -> absl::StatusOr<audit::v1::QueryResponse> {
          ++queries_;
          if (!available_) return absl::UnavailableError("audit_svc is away");
          audit::v1::QueryResponse response;
          for (const audit::v1::AuditRecord& record : records_) {
            if (!request.filter().trace_id().empty() &&
                record.control_plane().trace_id() != request.filter().trace_id()) {
              continue;
            }
            if (record.control_plane().type() != request.filter().control_plane_type()) continue;
            *response.add_records() = record;
          }
          return response;
        };
  }

  bool available_ = true;
  int queries_ = 0;

 private:
  std::vector<audit::v1::AuditRecord> records_;
};

}  // namespace sharedos::grantstore::core::testing

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_FAKE_CONTROL_PLANE_LOG_H_
