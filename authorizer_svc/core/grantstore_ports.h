// The authorization core's ports (authorizer_svc/core/ports.h, delegation.h) implemented over
// grantstore_svc RPCs (architecture §4): bounded-use counters (TryConsume/GetUsage), the
// trusted ancestor lookup at the lease's revision (ResolveGrant) and live revocation
// (CheckRevocations). Each is thread-safe; the client is borrowed and must outlive them.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_GRANTSTORE_PORTS_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_GRANTSTORE_PORTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "authorizer_svc/core/delegation.h"
#include "authorizer_svc/core/ports.h"
#include "grantstore_svc/client/grant_store_client.h"

namespace sharedos::authorizer::core {

// GrantUsageStore over grantstore_svc. Any error (store down, slow, unknown grant) is an error
// to the core, which answers usage_store_unavailable.
class GrantStoreUsageCounter : public UsageCounter {
 public:
  GrantStoreUsageCounter(grantstore::client::GrantStoreClient& client,
                         grantstore::client::CallOptions options)
      : client_(client), options_(options) {}

  absl::StatusOr<bool> TryConsume(absl::string_view namespace_id, absl::string_view grant_id,
                                  int64_t max_uses) override;
  absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                   absl::string_view grant_id) override;

 private:
  grantstore::client::GrantStoreClient& client_;
  const grantstore::client::CallOptions options_;
};

// Answers GetUsage once per grant for the lifetime of one batch (a Discover of a whole
// catalogue, a Reach), so a catalogue of 200 tools costs one read per bounded grant, not one per
// tool. Never consumes (TryConsume is refused: batches are discovery). Thread-safe.
class BatchUsageCounter : public UsageCounter {
 public:
  explicit BatchUsageCounter(UsageCounter& counter) : counter_(counter) {}

  absl::StatusOr<bool> TryConsume(absl::string_view namespace_id, absl::string_view grant_id,
                                  int64_t max_uses) override;
  absl::StatusOr<int64_t> GetUsage(absl::string_view namespace_id,
                                   absl::string_view grant_id) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  UsageCounter& counter_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, absl::StatusOr<int64_t>> answers_ ABSL_GUARDED_BY(mu_);
};

// DelegationChainResolver over ResolveGrant at one store revision (the lease's): ancestors are
// read as of the snapshot the turn was admitted on, identically on every replica. A revision
// never changes, so answers (found or parent_not_found) are cached for the lease's life; errors
// are not (resolver_failed now, a retry later).
class RevisionDelegationResolver : public DelegationResolver {
 public:
  RevisionDelegationResolver(grantstore::client::GrantStoreClient& client, int64_t revision,
                             grantstore::client::CallOptions options)
      : client_(client), revision_(revision), options_(options) {}

  absl::StatusOr<std::optional<protocol::v1::CapabilityGrant>> Resolve(
      absl::string_view namespace_id, absl::string_view grant_id) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  grantstore::client::GrantStoreClient& client_;
  const int64_t revision_;
  const grantstore::client::CallOptions options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::pair<std::string, std::string>,
                      std::optional<protocol::v1::CapabilityGrant>>
      cache_ ABSL_GUARDED_BY(mu_);
};

// GrantRevocationSource (ADR 0027) over CheckRevocations.
class GrantStoreRevocationSource : public RevocationSource {
 public:
  GrantStoreRevocationSource(grantstore::client::GrantStoreClient& client,
                             grantstore::client::CallOptions options)
      : client_(client), options_(options) {}

  absl::StatusOr<RevocationResult> Check(absl::string_view namespace_id,
                                         absl::Span<const std::string> grant_ids) override;

 private:
  grantstore::client::GrantStoreClient& client_;
  const grantstore::client::CallOptions options_;
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_GRANTSTORE_PORTS_H_
