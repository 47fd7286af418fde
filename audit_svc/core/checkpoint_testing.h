// For tests: rewrites of a SQLite audit log file as someone who can write the file (but holds no
// checkpoint key) could make them, each keeping the chain consistent — every later hash and the
// stored head recomputed — so that Verify without a checkpoint still answers ok.
#ifndef SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_TESTING_H_
#define SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_TESTING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace sharedos::audit::core::testing {

// Record `sequence`'s outcome denied → allowed (its JSON and its indexed column), every later
// hash and the head recomputed. Errors: NOT_FOUND (no such record, or it is not denied).
absl::Status RewriteDeniedAsAllowed(const std::string& db_path, int64_t sequence);

// Deletes the records after `keep` and moves the head back to record `keep` (0: the empty log).
absl::Status TruncateTail(const std::string& db_path, int64_t keep);

// Writes a fresh Ed25519 private key (PEM, PKCS#8, as `openssl genpkey -algorithm ed25519` does)
// to `path`, mode 0600.
absl::Status WriteNewEd25519Key(const std::string& path);

}  // namespace sharedos::audit::core::testing

#endif  // SHAREDOS_AUDIT_SVC_CORE_CHECKPOINT_TESTING_H_
