#ifndef SHAREDOS_AUDIT_SVC_CLIENT_FAKE_AUDIT_WRITER_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_FAKE_AUDIT_WRITER_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/client/audit_writer.h"

namespace sharedos::audit::client {

// An in-memory AuditWriter for tests: keeps every event it accepts (with version and id
// stamped), and can be told to fail either path. Thread-safe.
class FakeAuditWriter : public AuditWriter {
 public:
  absl::Status RecordPreEffect(sharedos::protocol::v1::AuditEvent event) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status RecordPostEffect(sharedos::protocol::v1::AuditEvent event) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Kept apart from the "1" events (control_plane_events()); fails with FailPreEffect.
  absl::Status RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // Subsequent writes on that path fail with UNAVAILABLE (and are not kept) while true.
  void FailPreEffect(bool fail) ABSL_LOCKS_EXCLUDED(mu_);
  void FailPostEffect(bool fail) ABSL_LOCKS_EXCLUDED(mu_);

  struct Recorded {
    sharedos::protocol::v1::AuditEvent event;
    bool pre_effect = false;
  };
  std::vector<Recorded> recorded() const ABSL_LOCKS_EXCLUDED(mu_);
  // The recorded events of one type, in order.
  std::vector<Recorded> recorded(sharedos::protocol::v1::AuditEventType type) const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<sharedos::protocol::v1::AuditEvent> events() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<sharedos::audit::v1::ControlPlaneEvent> control_plane_events() const
      ABSL_LOCKS_EXCLUDED(mu_);
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Status Record(sharedos::protocol::v1::AuditEvent event, bool pre_effect)
      ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  bool fail_pre_ ABSL_GUARDED_BY(mu_) = false;
  bool fail_post_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Recorded> recorded_ ABSL_GUARDED_BY(mu_);
  std::vector<sharedos::audit::v1::ControlPlaneEvent> control_plane_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_FAKE_AUDIT_WRITER_H_
