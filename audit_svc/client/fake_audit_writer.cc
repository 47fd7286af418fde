#include "audit_svc/client/fake_audit_writer.h"

#include <utility>

#include "common/crypto/random.h"

namespace sharedos::audit::client {

absl::Status FakeAuditWriter::RecordPreEffect(sharedos::protocol::v1::AuditEvent event) {
  return Record(std::move(event), /*pre_effect=*/true);
}

absl::Status FakeAuditWriter::RecordPostEffect(sharedos::protocol::v1::AuditEvent event) {
  return Record(std::move(event), /*pre_effect=*/false);
}

absl::Status FakeAuditWriter::RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) {
  absl::MutexLock lock(&mu_);
  if (fail_pre_) return absl::UnavailableError("audit unavailable (FakeAuditWriter told to fail)");
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  control_plane_.push_back(std::move(event));
  return absl::OkStatus();
}

std::vector<sharedos::audit::v1::ControlPlaneEvent> FakeAuditWriter::control_plane_events() const {
  absl::MutexLock lock(&mu_);
  return control_plane_;
}

absl::Status FakeAuditWriter::Record(sharedos::protocol::v1::AuditEvent event, bool pre_effect) {
  absl::MutexLock lock(&mu_);
  if (pre_effect ? fail_pre_ : fail_post_) {
    return absl::UnavailableError("audit unavailable (FakeAuditWriter told to fail)");
  }
  event.set_version("1");
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  recorded_.push_back({std::move(event), pre_effect});
  return absl::OkStatus();
}

void FakeAuditWriter::FailPreEffect(bool fail) {
  absl::MutexLock lock(&mu_);
  fail_pre_ = fail;
}

void FakeAuditWriter::FailPostEffect(bool fail) {
  absl::MutexLock lock(&mu_);
  fail_post_ = fail;
}

std::vector<FakeAuditWriter::Recorded> FakeAuditWriter::recorded() const {
  absl::MutexLock lock(&mu_);
  return recorded_;
}

std::vector<FakeAuditWriter::Recorded> FakeAuditWriter::recorded(
    sharedos::protocol::v1::AuditEventType type) const {
  absl::MutexLock lock(&mu_);
  std::vector<Recorded> out;
  for (const Recorded& r : recorded_) {
    if (r.event.type() == type) out.push_back(r);
  }
  return out;
}

std::vector<sharedos::protocol::v1::AuditEvent> FakeAuditWriter::events() const {
  absl::MutexLock lock(&mu_);
  std::vector<sharedos::protocol::v1::AuditEvent> out;
  for (const Recorded& r : recorded_) out.push_back(r.event);
  return out;
}

void FakeAuditWriter::Clear() {
  absl::MutexLock lock(&mu_);
  recorded_.clear();
  control_plane_.clear();
}

}  // namespace sharedos::audit::client
