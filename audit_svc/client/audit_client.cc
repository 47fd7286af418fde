#include "audit_svc/client/audit_client.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/core/control_plane_event.h"
#include "audit_svc/core/redaction.h"
#include "common/crypto/random.h"
#include "common/status/grpc_status.h"
#include "common/validation/protocol.h"

namespace sharedos::audit::client {

namespace v1 = ::sharedos::audit::v1;
using ::sharedos::protocol::v1::AuditEvent;

namespace {

class GrpcTarget final : public AppendTarget {
 public:
  GrpcTarget(std::unique_ptr<v1::AuditLog::StubInterface> stub, std::string token)
      : stub_(std::move(stub)), token_(std::move(token)) {}

  absl::Status Append(const v1::AppendRequest& request, absl::Time deadline) override {
    v1::AppendResponse response;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token_);
    context.set_deadline(absl::ToChronoTime(deadline));
    return common::FromGrpcStatus(stub_->Append(&context, request, &response));
  }

 private:
  const std::unique_ptr<v1::AuditLog::StubInterface> stub_;
  const std::string token_;
};

// audit_svc refused the records outright (retrying would not help).
bool Refused(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status) ||
         absl::IsPermissionDenied(status);
}

}  // namespace

std::unique_ptr<AppendTarget> GrpcAppendTarget(std::unique_ptr<v1::AuditLog::StubInterface> stub,
                                               std::string token) {
  return std::make_unique<GrpcTarget>(std::move(stub), std::move(token));
}

absl::StatusOr<std::unique_ptr<AuditClient>> AuditClient::Create(
    std::unique_ptr<v1::AuditLog::StubInterface> stub, AuditClientOptions options) {
  if (stub == nullptr) return absl::InvalidArgumentError("audit client: no stub");
  std::string token = options.token;
  return Create(GrpcAppendTarget(std::move(stub), std::move(token)), std::move(options));
}

absl::StatusOr<std::unique_ptr<AuditClient>> AuditClient::Create(
    std::unique_ptr<AppendTarget> target, AuditClientOptions options) {
  if (target == nullptr) return absl::InvalidArgumentError("audit client: no append target");
  if (options.outbox_path.empty()) return absl::InvalidArgumentError("audit outbox: path required");
  if (options.batch_size < 1 || options.batch_size > 1000) {
    return absl::InvalidArgumentError("audit client batch_size: must be 1..1000");
  }
  absl::StatusOr<std::unique_ptr<Outbox>> outbox =
      Outbox::Open(options.outbox_path, options.max_outbox_events, options.outbox_fsync,
                   common::metrics::OutboxMetrics(options.metrics, options.writer));
  if (!outbox.ok()) return outbox.status();
  return std::unique_ptr<AuditClient>(
      new AuditClient(std::move(target), *std::move(outbox), std::move(options)));
}

AuditClient::AuditClient(std::unique_ptr<AppendTarget> target, std::unique_ptr<Outbox> outbox,
                         AuditClientOptions options)
    : target_(std::move(target)), outbox_(std::move(outbox)), options_(std::move(options)) {
  if (!options_.writer.empty()) {
    registration_ =
        std::make_unique<common::server::OutboxRegistration>(options_.writer, [this]() -> int64_t {
          absl::StatusOr<int64_t> size = outbox_->Size();
          return size.ok() ? *size : -1;
        });
  }
  shipper_ = std::thread([this] { ShipLoop(); });
}

AuditClient::~AuditClient() {
  registration_.reset();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  shipper_.join();
}

absl::Status AuditClient::Prepare(AuditEvent& event) const {
  event.set_version("1");
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  absl::Status valid = common::validation::ValidateAuditEvent(&event, "event");
  if (!valid.ok()) return valid;
  return core::CheckRedaction(event);
}

absl::Status AuditClient::AppendNow(const std::vector<const v1::LogEntry*>& entries) {
  v1::AppendRequest request;
  for (const v1::LogEntry* entry : entries) *request.add_entries() = *entry;
  const absl::Status status = target_->Append(request, absl::Now() + options_.append_deadline);
  if (status.ok()) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("audit_unavailable: audit_svc did not take the record (",
                   absl::StatusCodeToString(status.code()), ")"));
}

absl::Status AuditClient::RecordPreEffect(AuditEvent event) {
  absl::Status prepared = Prepare(event);
  if (!prepared.ok()) return prepared;
  v1::LogEntry entry;
  *entry.mutable_event() = std::move(event);
  return RecordPreEffectGrouped(entry);
}

absl::Status AuditClient::RecordControlPlane(v1::ControlPlaneEvent event) {
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  absl::Status valid = core::ValidateControlPlaneEvent(&event);
  if (!valid.ok()) return valid;
  absl::Status redacted = core::CheckRedaction(event);
  if (!redacted.ok()) return redacted;
  v1::LogEntry entry;
  *entry.mutable_control_plane() = std::move(event);
  return RecordPreEffectGrouped(entry);
}

absl::Status AuditClient::MakeDurable(const std::vector<const v1::LogEntry*>& entries) {
  if (options_.mode == PreEffectMode::kRemote) return AppendNow(entries);
  absl::Status put = outbox_->PutAll(entries);
  if (!put.ok()) {
    return absl::UnavailableError(absl::StrCat("audit_unavailable: ", put.message()));
  }
  Wake();
  return absl::OkStatus();
}

absl::Status AuditClient::RecordPreEffectGrouped(const v1::LogEntry& entry) {
  PreEffectWaiter self;
  self.entry = &entry;
  absl::MutexLock lock(&pre_mu_);
  pre_queue_.push_back(&self);
  while (true) {
    auto settled_or_free = [this, &self]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pre_mu_) {
      return self.done || !pre_leader_;
    };
    pre_mu_.Await(absl::Condition(&settled_or_free));
    if (self.done) return self.status;
    // No group in flight: lead one made of everything waiting (this record included).
    pre_leader_ = true;
    std::vector<PreEffectWaiter*> group;
    group.swap(pre_queue_);
    std::vector<const v1::LogEntry*> entries;
    entries.reserve(group.size());
    for (const PreEffectWaiter* waiter : group) entries.push_back(waiter->entry);
    pre_mu_.Unlock();
    const absl::Status status = MakeDurable(entries);
    pre_mu_.Lock();
    for (PreEffectWaiter* waiter : group) {
      waiter->status = status;
      waiter->done = true;
    }
    // Hand on: a waiter whose record came in meanwhile leads the next group.
    pre_leader_ = false;
  }
}

absl::Status AuditClient::RecordPostEffect(AuditEvent event) {
  absl::Status prepared = Prepare(event);
  if (!prepared.ok()) {
    Report(prepared);
    return prepared;
  }
  absl::Status put = outbox_->Put(event);
  if (!put.ok()) {
    Report(put);
    return put;
  }
  Wake();
  return absl::OkStatus();
}

void AuditClient::Wake() {
  absl::MutexLock lock(&mu_);
  ++wakeups_;
}

void AuditClient::Report(const absl::Status& status) {
  if (options_.on_error) options_.on_error(status);
}

bool AuditClient::ShipOnce() {
  auto batch = outbox_->Peek(options_.batch_size);
  if (!batch.ok()) {
    Report(batch.status());
    return false;
  }
  if (batch->empty()) return true;
  v1::AppendRequest request;
  for (const auto& [position, entry] : *batch) *request.add_entries() = entry;
  const absl::Status status = target_->Append(request, absl::Now() + options_.append_deadline);
  if (status.ok()) {
    absl::Status removed = outbox_->RemoveThrough(batch->back().first);
    if (!removed.ok()) Report(removed);
    return removed.ok();
  }
  if (Refused(status)) {
    // audit_svc refuses something in the batch outright; retrying would block the queue. Find
    // the refused event by sending the oldest alone, and set it aside for operators.
    if (batch->size() == 1) {
      absl::Status dead =
          outbox_->DeadLetter(batch->front().first, absl::StatusCodeToString(status.code()));
      Report(absl::InternalError(absl::StrCat("audit_svc refused an outbox event (",
                                              status.message(), "); moved to dead letters")));
      return dead.ok();
    }
    v1::AppendRequest single;
    *single.add_entries() = batch->front().second;
    const absl::Status single_status =
        target_->Append(single, absl::Now() + options_.append_deadline);
    if (single_status.ok()) return outbox_->RemoveThrough(batch->front().first).ok();
    if (Refused(single_status)) {
      Report(
          absl::InternalError(absl::StrCat("audit_svc refused an outbox event (",
                                           single_status.message(), "); moved to dead letters")));
      return outbox_->DeadLetter(batch->front().first, "refused").ok();
    }
    return false;
  }
  return false;  // unreachable, unavailable, deadline: retry with backoff
}

void AuditClient::ShipLoop() {
  const common::Clock& clock = *options_.clock;
  absl::Duration backoff = options_.min_backoff;
  int64_t seen_wakeups = 0;
  absl::Time gauges_reported = absl::InfinitePast();
  auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    // The outbox gauges (depth, oldest age), at most once a second: the pass wakes at least
    // that often.
    if (clock.Now() - gauges_reported >= absl::Seconds(1)) {
      outbox_->ReportGauges();
      gauges_reported = clock.Now();
    }
    auto pending = outbox_->Size();
    if (pending.ok() && *pending > 0) {
      if (*pending < options_.batch_size && options_.ship_linger > absl::ZeroDuration()) {
        absl::MutexLock lock(&mu_);
        if (clock.AwaitWithTimeout(&mu_, absl::Condition(&stop), options_.ship_linger)) return;
      }
      const bool shipped = ShipOnce();
      absl::MutexLock lock(&mu_);
      ++passes_;
      if (shipped) {
        backoff = options_.min_backoff;
        continue;
      }
      // audit_svc away: wait, growing the pause, unless told to stop.
      clock.AwaitWithTimeout(&mu_, absl::Condition(&stop), backoff);
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    absl::MutexLock lock(&mu_);
    ++passes_;
    auto woken = [this, &seen_wakeups]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || wakeups_ != seen_wakeups;
    };
    clock.AwaitWithTimeout(&mu_, absl::Condition(&woken), absl::Seconds(1));
    seen_wakeups = wakeups_;
  }
}

bool AuditClient::Flush(absl::Duration timeout) {
  const common::Clock& clock = *options_.clock;
  const absl::Time deadline = clock.Now() + timeout;
  while (true) {
    auto pending = outbox_->Size();
    if (pending.ok() && *pending == 0) return true;
    const absl::Duration left = deadline - clock.Now();
    if (left <= absl::ZeroDuration()) return false;
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    // Wake the shipper and wait for its next pass to end (or the time to run out).
    ++wakeups_;
    const int64_t seen = passes_;
    auto passed = [this, seen]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || passes_ > seen; };
    clock.AwaitWithTimeout(&mu_, absl::Condition(&passed), left);
  }
}

}  // namespace sharedos::audit::client
