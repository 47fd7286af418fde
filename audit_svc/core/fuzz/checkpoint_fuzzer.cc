// Fuzzes signed checkpoints as Verify receives them (VerifyWithCheckpoints over an in-memory log
// of three records, checked under a fixed Ed25519 key). Input byte 0 picks how the rest is read:
//   0: a checkpoint file line (proto3 JSON, as sharedosctl parses --checkpoint);
//   1: a SignedCheckpoint in protobuf binary;
//   2: XORed, cyclically, into the binary form of a genuine checkpoint of the head;
//   3: a PEM public key pinned for the genuine checkpoint.
// Properties: nothing crashes; a refusal is INVALID_ARGUMENT naming checkpoints[0] or
// checkpoint_public_key_pem; ok is answered only for a checkpoint whose signed fields and
// signature are the genuine one's (nothing is forged by mutation), and always for the genuine
// one unchanged; a pinned key other than the signer's never verifies it.

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/storage/memory_audit_store.h"
#include "common/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace {

using ::sharedos::audit::core::AuditLog;
using ::sharedos::audit::core::Checkpointer;
using ::sharedos::audit::core::CheckpointKey;
using ::sharedos::audit::v1::SignedCheckpoint;
using ::sharedos::audit::v1::VerifyRequest;

struct Fixture {
  std::unique_ptr<AuditLog> log;
  std::unique_ptr<Checkpointer> checkpointer;
  SignedCheckpoint genuine;
};

// A fixed key (seed bytes 1..32), written as PEM to a temporary file and read as the server
// reads --checkpoint_key_file; Ed25519 signatures are deterministic, so runs are reproducible.
std::unique_ptr<CheckpointKey> FixedKey() {
  unsigned char seed[32];
  for (int i = 0; i < 32; ++i) seed[i] = static_cast<unsigned char>(i + 1);
  EVP_PKEY* key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed, sizeof(seed));
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/checkpoint_fuzzer_XXXXXX");
  const int fd = mkstemp(path.data());
  FILE* file = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (key == nullptr || file == nullptr ||
      PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    std::abort();
  }
  std::fclose(file);
  EVP_PKEY_free(key);
  auto read = CheckpointKey::ReadPrivateKeyFile(path, "key");
  std::remove(path.c_str());
  if (!read.ok()) std::abort();
  return *std::move(read);
}

Fixture& Get() {
  static Fixture* fixture = [] {
    auto* f = new Fixture;
    f->log =
        std::make_unique<AuditLog>(std::make_unique<sharedos::audit::storage::MemoryAuditStore>(),
                                   sharedos::common::RealClock(), AuditLog::Options());
    for (int i = 0; i < 3; ++i) {
      sharedos::protocol::v1::AuditEvent event;
      event.set_version("1");
      event.set_id(absl::StrCat("event-", i));
      event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
      event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_DENIED);
      event.mutable_at()->set_seconds(1786438800);
      event.set_trace_id("trace");
      event.set_namespace_id("world");
      event.mutable_actor()->set_agent_id("agent");
      event.mutable_authority()->set_human_user_id("alice");
      event.mutable_owner()->set_human_user_id("alice");
      event.set_purpose("fuzz");
      event.set_reason("tool_unavailable");
      event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_ENVELOPE);
      if (!f->log->AppendEvent(event, "service:envelope").ok()) std::abort();
    }
    auto checkpointer =
        Checkpointer::Create(*f->log, FixedKey(), sharedos::common::RealClock(), {});
    if (!checkpointer.ok()) std::abort();
    f->checkpointer = *std::move(checkpointer);
    auto genuine = f->checkpointer->CheckpointNow();
    if (!genuine.ok()) std::abort();
    f->genuine = *genuine;
    return f;
  }();
  return *fixture;
}

bool SameAsGenuine(const SignedCheckpoint& checkpoint, const SignedCheckpoint& genuine) {
  using ::sharedos::audit::core::CheckpointSigningText;
  return CheckpointSigningText(checkpoint) == CheckpointSigningText(genuine) &&
         checkpoint.signature() == genuine.signature();
}

void Check(const VerifyRequest& request, bool must_verify) {
  Fixture& f = Get();
  auto response = VerifyWithCheckpoints(*f.log, request, &f.checkpointer->key());
  if (!response.ok()) {
    if (response.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    const absl::string_view message = response.status().message();
    if (!absl::StartsWith(message, "checkpoints[0]") &&
        !absl::StartsWith(message, "checkpoint_public_key_pem")) {
      std::abort();
    }
    if (must_verify) std::abort();
    return;
  }
  if (response->ok() && !SameAsGenuine(request.checkpoints(0), f.genuine)) std::abort();
  if (response->ok() && !request.checkpoint_public_key_pem().empty() &&
      request.checkpoint_public_key_pem() != f.checkpointer->key().public_key_pem()) {
    // Another PEM text may encode the same key; any other key must not verify.
    auto pinned = CheckpointKey::ParsePublicKeyPem(request.checkpoint_public_key_pem(), "pem");
    if (!pinned.ok() || (*pinned)->key_id() != f.checkpointer->key().key_id()) std::abort();
  }
  if (must_verify && !response->ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  Fixture& f = Get();
  VerifyRequest request;
  SignedCheckpoint& checkpoint = *request.add_checkpoints();
  switch (data[0] % 4) {
    case 0:
      if (!google::protobuf::util::JsonStringToMessage(rest, &checkpoint).ok()) return 0;
      break;
    case 1:
      if (!checkpoint.ParseFromString(rest)) return 0;
      break;
    case 2: {
      std::string bytes = f.genuine.SerializeAsString();
      bool changed = false;
      for (size_t i = 0; i < rest.size() && i < 4 * bytes.size(); ++i) {
        bytes[i % bytes.size()] ^= rest[i];
        changed = changed || rest[i] != 0;
      }
      if (!checkpoint.ParseFromString(bytes)) return 0;
      Check(request, /*must_verify=*/!changed);
      return 0;
    }
    default:
      checkpoint = f.genuine;
      request.set_checkpoint_public_key_pem(rest);
      break;
  }
  Check(request, /*must_verify=*/false);
  return 0;
}
