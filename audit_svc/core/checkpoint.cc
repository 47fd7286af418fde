#include "audit_svc/core/checkpoint.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "audit_svc/storage/audit_store.h"
#include "common/crypto/sha256.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"

namespace sharedos::audit::core {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::SignedCheckpoint;
using ::sharedos::audit::v1::VerifyRequest;
using ::sharedos::audit::v1::VerifyResponse;

struct CheckpointKey::Pkey {
  EVP_PKEY* key;
};

namespace {

constexpr size_t kEd25519SignatureBytes = 64;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

bool IsLowerHex64(const std::string& value) {
  if (value.size() != 64) return false;
  for (char c : value) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace

std::string CheckpointSigningText(const SignedCheckpoint& checkpoint) {
  return absl::StrCat("sharedos.audit.checkpoint.v1\n", "sequence=", checkpoint.sequence(), "\n",
                      "head_hash=", checkpoint.head_hash(), "\n",
                      "at=", TimeUtil::ToString(checkpoint.at()), "\n",
                      "key_id=", checkpoint.key_id(), "\n");
}

std::string CheckpointJson(const SignedCheckpoint& checkpoint) {
  std::string line;
  if (!google::protobuf::util::MessageToJsonString(checkpoint, &line).ok()) return "";
  return line;
}

std::string CheckpointLogLine(const SignedCheckpoint& checkpoint) {
  nlohmann::json line = {{"event", kCheckpointLogEvent},
                         {"sequence", checkpoint.sequence()},
                         {"key_id", checkpoint.key_id()},
                         {kCheckpointLogField, CheckpointJson(checkpoint)}};
  return line.dump();
}

absl::StatusOr<std::optional<SignedCheckpoint>> ParseCheckpointLogLine(absl::string_view line) {
  const std::string marker = absl::StrCat("\"", kCheckpointLogEvent, "\"");
  if (!absl::StrContains(line, marker)) return std::nullopt;
  if (line.size() > kMaxCheckpointLogLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat("an audit.checkpoint line longer than ",
                                                   kMaxCheckpointLogLineBytes, " bytes"));
  }
  const size_t brace = line.find('{');
  const std::string json(brace == absl::string_view::npos ? "" : line.substr(brace));
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError("names audit.checkpoint but is not a JSON log line");
  }
  const auto event = parsed.find("event");
  if (event == parsed.end() || !event->is_string() ||
      event->get<std::string>() != kCheckpointLogEvent) {
    return std::nullopt;
  }
  const auto field = parsed.find(kCheckpointLogField);
  if (field == parsed.end() || !field->is_string()) {
    return absl::InvalidArgumentError("an audit.checkpoint line without its \"checkpoint\" text");
  }
  SignedCheckpoint checkpoint;
  if (!google::protobuf::util::JsonStringToMessage(field->get<std::string>(), &checkpoint).ok()) {
    return absl::InvalidArgumentError(
        "an audit.checkpoint line whose \"checkpoint\" is not a signed checkpoint");
  }
  return checkpoint;
}

absl::Status ValidateSignedCheckpoint(const SignedCheckpoint& checkpoint, absl::string_view path) {
  if (checkpoint.sequence() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".sequence: negative"));
  }
  if (!IsLowerHex64(checkpoint.head_hash())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".head_hash: not 64 lowercase hex digits"));
  }
  if (checkpoint.key_id().size() > common::validation::kMaxIdentifierLength) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".key_id: longer than 256"));
  }
  if (!checkpoint.has_at()) return absl::InvalidArgumentError(absl::StrCat(path, ".at: absent"));
  RETURN_IF_ERROR(common::validation::CheckTimestamp(checkpoint.at(), absl::StrCat(path, ".at")));
  if (checkpoint.signature().size() > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".signature: longer than 1024 bytes"));
  }
  return absl::OkStatus();
}

CheckpointKey::CheckpointKey(Pkey* pkey, bool can_sign) : pkey_(pkey), can_sign_(can_sign) {
  unsigned char raw[32];
  size_t raw_len = sizeof(raw);
  if (EVP_PKEY_get_raw_public_key(pkey_->key, raw, &raw_len) == 1) {
    key_id_ = common::Sha256Hex(std::string(reinterpret_cast<char*>(raw), raw_len)).substr(0, 16);
  }
  Bio bio(BIO_new(BIO_s_mem()));
  if (bio && PEM_write_bio_PUBKEY(bio.get(), pkey_->key) == 1) {
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    if (len > 0) public_key_pem_.assign(data, static_cast<size_t>(len));
  }
}

CheckpointKey::~CheckpointKey() {
  EVP_PKEY_free(pkey_->key);
  delete pkey_;
}

absl::StatusOr<std::unique_ptr<CheckpointKey>> CheckpointKey::ReadPrivateKeyFile(
    const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::string pem(kMaxCheckpointKeyFileBytes + 1, '\0');
  in.read(pem.data(), static_cast<std::streamsize>(pem.size()));
  pem.resize(static_cast<size_t>(in.gcount()));
  if (pem.size() > kMaxCheckpointKeyFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": larger than 64 KiB"));
  }
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  // No passphrase callback that could prompt on a terminal: an encrypted key is refused.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  EVP_PKEY* key =
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr) : nullptr;
  std::fill(pem.begin(), pem.end(), '\0');
  if (key == nullptr || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": not a PEM Ed25519 private key (openssl genpkey -algorithm ed25519)"));
  }
  return std::unique_ptr<CheckpointKey>(new CheckpointKey(new Pkey{key}, /*can_sign=*/true));
}

absl::StatusOr<std::unique_ptr<CheckpointKey>> CheckpointKey::ParsePublicKeyPem(
    absl::string_view pem, absl::string_view field) {
  if (pem.size() > kMaxCheckpointKeyFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": larger than 64 KiB"));
  }
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  EVP_PKEY* key = bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr) : nullptr;
  if (key == nullptr || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    return absl::InvalidArgumentError(absl::StrCat(field, ": not a PEM Ed25519 public key"));
  }
  return std::unique_ptr<CheckpointKey>(new CheckpointKey(new Pkey{key}, /*can_sign=*/false));
}

absl::Status CheckpointKey::Sign(SignedCheckpoint& checkpoint) const {
  if (!can_sign_) return absl::FailedPreconditionError("checkpoint key: a public key cannot sign");
  checkpoint.set_key_id(key_id_);
  const std::string text = CheckpointSigningText(checkpoint);
  MdCtx ctx(EVP_MD_CTX_new());
  unsigned char signature[kEd25519SignatureBytes];
  size_t signature_len = sizeof(signature);
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey_->key) != 1 ||
      EVP_DigestSign(ctx.get(), signature, &signature_len,
                     reinterpret_cast<const unsigned char*>(text.data()), text.size()) != 1) {
    return absl::InternalError("checkpoint: Ed25519 signing failed");
  }
  checkpoint.set_signature(std::string(reinterpret_cast<char*>(signature), signature_len));
  return absl::OkStatus();
}

std::string CheckpointKey::CheckSignature(const SignedCheckpoint& checkpoint) const {
  if (checkpoint.key_id() != key_id_) {
    return absl::StrCat("signed by key ", checkpoint.key_id().substr(0, 16), ", not ", key_id_);
  }
  if (checkpoint.signature().size() != kEd25519SignatureBytes) {
    return "signature: not 64 bytes";
  }
  const std::string text = CheckpointSigningText(checkpoint);
  MdCtx ctx(EVP_MD_CTX_new());
  const bool ok =
      ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey_->key) == 1 &&
      EVP_DigestVerify(ctx.get(),
                       reinterpret_cast<const unsigned char*>(checkpoint.signature().data()),
                       checkpoint.signature().size(),
                       reinterpret_cast<const unsigned char*>(text.data()), text.size()) == 1;
  return ok ? "" : "signature does not verify (forged or altered)";
}

// --- The default key ---

namespace {

absl::Status KeyError(const std::string& path, absl::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("checkpoint key ", path, ": ", what,
                   " (the default key of this data directory; or give --checkpoint_key_file)"));
}

// A path owned by this user and closed to group and others (the owner-only rule of the default
// key directory and key file); `kind` S_IFDIR or S_IFREG.
absl::Status CheckOwnerOnly(const std::string& path, mode_t kind) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return KeyError(path, absl::StrCat("cannot be read (", std::strerror(errno), ")"));
  }
  if ((st.st_mode & S_IFMT) != kind) {
    return KeyError(path, kind == S_IFDIR ? "not a directory" : "not a regular file");
  }
  if (st.st_uid != geteuid()) return KeyError(path, "owned by another user");
  if ((st.st_mode & 077) != 0) {
    return KeyError(path, absl::StrFormat("open to group or others (mode %04o; chmod %s it)",
                                          st.st_mode & 07777, kind == S_IFDIR ? "700" : "600"));
  }
  return absl::OkStatus();
}

// Writes `content` to a new file `path` (mode `mode`), whole and synced; refuses to replace one.
bool WriteNewFile(const std::string& path, const std::string& content, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return false;
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const bool ok = written == content.size() && fchmod(fd, mode) == 0 && fsync(fd) == 0;
  close(fd);
  if (!ok) unlink(path.c_str());
  return ok;
}

void SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

// A new Ed25519 private key, PEM (PKCS#8, unencrypted); empty when generation failed.
std::string NewEd25519KeyPem() {
  EVP_PKEY* key = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  const bool made =
      ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  std::string pem;
  Bio bio(BIO_new(BIO_s_mem()));
  if (made && bio &&
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1) {
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    if (len > 0) pem.assign(data, static_cast<size_t>(len));
  }
  EVP_PKEY_free(key);
  return pem;
}

// Mints the key at `key_file` unless one is there: written whole under a name of its own, then
// linked into place (link never replaces an existing file). True when this call placed it.
absl::StatusOr<bool> MintUnlessPresent(const std::string& dir, const std::string& key_file) {
  if (access(key_file.c_str(), F_OK) == 0 || errno != ENOENT) return false;
  std::string pem = NewEd25519KeyPem();
  if (pem.empty()) return KeyError(key_file, "Ed25519 key generation failed");
  const std::string temporary = absl::StrCat(key_file, ".new-", getpid());
  unlink(temporary.c_str());
  const bool written = WriteNewFile(temporary, pem, 0600);
  std::fill(pem.begin(), pem.end(), '\0');
  if (!written) {
    return KeyError(key_file, absl::StrCat("cannot be written (", std::strerror(errno), ")"));
  }
  const bool linked = link(temporary.c_str(), key_file.c_str()) == 0;
  const int saved = errno;
  unlink(temporary.c_str());
  SyncDirectory(dir);
  if (!linked && saved != EEXIST) {
    return KeyError(key_file, absl::StrCat("cannot be created (", std::strerror(saved), ")"));
  }
  return linked;
}

}  // namespace

std::string DefaultCheckpointKeyDir(const std::string& data_dir) {
  std::string dir = std::filesystem::absolute(data_dir).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, kDefaultCheckpointKeyDirSuffix);
}

absl::StatusOr<DefaultCheckpointKey> LoadOrMintDefaultCheckpointKey(const std::string& data_dir) {
  const std::string dir = DefaultCheckpointKeyDir(data_dir);
  DefaultCheckpointKey result;
  result.key_file = absl::StrCat(dir, "/", kCheckpointKeyFileName);
  result.public_key_file = absl::StrCat(dir, "/", kCheckpointPublicKeyFileName);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return KeyError(dir,
                    absl::StrCat("the directory cannot be created (", std::strerror(errno), ")"));
  }
  RETURN_IF_ERROR(CheckOwnerOnly(dir, S_IFDIR));
  ASSIGN_OR_RETURN(result.minted, MintUnlessPresent(dir, result.key_file));
  RETURN_IF_ERROR(CheckOwnerOnly(result.key_file, S_IFREG));
  absl::StatusOr<std::unique_ptr<CheckpointKey>> key = CheckpointKey::ReadPrivateKeyFile(
      result.key_file, absl::StrCat("checkpoint key ", result.key_file));
  if (!key.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(key.status().message(),
                     " (the default key of this data directory: restore it, or move "
                     "it away to mint a new one, or give --checkpoint_key_file)"));
  }
  result.key = *std::move(key);
  // The public half, for the operator: rewritten when absent or not this key's.
  std::ifstream existing(result.public_key_file, std::ios::binary);
  std::string current(kMaxCheckpointKeyFileBytes, '\0');
  existing.read(current.data(), static_cast<std::streamsize>(current.size()));
  current.resize(static_cast<size_t>(existing.gcount()));
  if (current != result.key->public_key_pem()) {
    const std::string temporary = absl::StrCat(result.public_key_file, ".new-", getpid());
    unlink(temporary.c_str());
    if (!WriteNewFile(temporary, result.key->public_key_pem(), 0644) ||
        rename(temporary.c_str(), result.public_key_file.c_str()) != 0) {
      unlink(temporary.c_str());
      return KeyError(result.public_key_file, absl::StrCat("the public key cannot be written (",
                                                           std::strerror(errno), ")"));
    }
    SyncDirectory(dir);
  }
  return result;
}

// --- Checkpointer ---

absl::StatusOr<std::unique_ptr<Checkpointer>> Checkpointer::Create(
    AuditLog& log, std::unique_ptr<CheckpointKey> key, const common::Clock& clock,
    Options options) {
  if (key == nullptr || !key->can_sign()) {
    return absl::InvalidArgumentError("checkpoint key: a private key is needed to sign");
  }
  if (options.interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("checkpoint interval: negative");
  }
  if (!options.export_file.empty()) {
    const int fd =
        open(options.export_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::UnavailableError(absl::StrCat("checkpoint file ", options.export_file,
                                                 ": cannot open for appending (",
                                                 std::strerror(errno), ")"));
    }
    close(fd);
  }
  return std::unique_ptr<Checkpointer>(
      new Checkpointer(log, std::move(key), clock, std::move(options)));
}

Checkpointer::Checkpointer(AuditLog& log, std::unique_ptr<CheckpointKey> key,
                           const common::Clock& clock, Options options)
    : log_(log), key_(std::move(key)), clock_(clock), options_(std::move(options)) {
  if (options_.interval > absl::ZeroDuration()) {
    interval_thread_ = std::thread([this] { IntervalLoop(); });
  }
}

Checkpointer::~Checkpointer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (interval_thread_.joinable()) interval_thread_.join();
}

absl::StatusOr<SignedCheckpoint> Checkpointer::CheckpointNow() {
  // One at a time: the export file and the generation stay in the order they were signed.
  absl::MutexLock lock(&mu_);
  SignedCheckpoint checkpoint;
  const int64_t head = log_.HeadSequence();
  checkpoint.set_sequence(head);
  checkpoint.set_head_hash(storage::kGenesisHash);
  if (head > 0) {
    ASSIGN_OR_RETURN(std::vector<v1::AuditRecord> records, log_.ReadAfter({}, head - 1, 1));
    if (records.empty() || records[0].sequence() != head) {
      return absl::UnavailableError("checkpoint: the head record cannot be read");
    }
    checkpoint.set_head_hash(records[0].hash());
  }
  *checkpoint.mutable_at() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(clock_.Now()));
  RETURN_IF_ERROR(key_->Sign(checkpoint));
  RETURN_IF_ERROR(Export(checkpoint));
  // Off the host with the process log: the line a log shipper carries, never a secret.
  common::logging::Log(common::logging::Level::kInfo, kCheckpointLogEvent, "",
                       {{"sequence", static_cast<long long>(checkpoint.sequence())},
                        {"key_id", checkpoint.key_id()},
                        {kCheckpointLogField, CheckpointJson(checkpoint)}});
  if (options_.on_signed) options_.on_signed(checkpoint);
  latest_ = checkpoint;
  recent_.push_back(checkpoint);
  if (recent_.size() > kRecentCheckpoints) recent_.pop_front();
  ++generation_;
  return checkpoint;
}

absl::Status Checkpointer::Export(const SignedCheckpoint& checkpoint) {
  if (options_.export_file.empty()) return absl::OkStatus();
  std::string line = CheckpointJson(checkpoint);
  if (line.empty()) return absl::InternalError("checkpoint: cannot encode as JSON");
  line += '\n';
  const int fd =
      open(options_.export_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("checkpoint file: cannot open (", std::strerror(errno), ")"));
  }
  // O_APPEND writes of one short line land whole; fsync before the checkpoint is answered.
  const ssize_t written = write(fd, line.data(), line.size());
  const int saved = errno;
  const bool synced = written == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
  close(fd);
  if (!synced) {
    return absl::UnavailableError(absl::StrCat("checkpoint file: cannot write (",
                                               std::strerror(written < 0 ? saved : errno), ")"));
  }
  return absl::OkStatus();
}

void Checkpointer::IntervalLoop() {
  int64_t signed_head = -1;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), options_.interval)) return;
    }
    if (log_.HeadSequence() == signed_head) continue;
    absl::StatusOr<SignedCheckpoint> made = CheckpointNow();
    if (made.ok()) {
      signed_head = made->sequence();
    } else {
      std::cerr << options_.binary_name << ": checkpoint failed: " << made.status().message()
                << "\n";
    }
  }
}

int64_t Checkpointer::Generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

std::vector<SignedCheckpoint> Checkpointer::CheckpointsAfter(int64_t& generation) const {
  absl::MutexLock lock(&mu_);
  const int64_t missing =
      std::min<int64_t>(generation_ - generation, static_cast<int64_t>(recent_.size()));
  generation = generation_;
  if (missing <= 0) return {};
  return std::vector<SignedCheckpoint>(recent_.end() - missing, recent_.end());
}

std::pair<int64_t, SignedCheckpoint> Checkpointer::WaitForCheckpointAfter(int64_t generation,
                                                                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto passed = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ > generation || stopping_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&passed), timeout);
  return {generation_, latest_};
}

// --- Verify against checkpoints ---

namespace {

// Empty when the log still extends `checkpoint` (signature already checked); otherwise why
// not, and `bad_sequence` the record at fault when there is one.
absl::StatusOr<std::string> CheckExtended(AuditLog& log, const SignedCheckpoint& checkpoint,
                                          std::optional<int64_t>& bad_sequence) {
  if (checkpoint.sequence() == 0) {
    return checkpoint.head_hash() == storage::kGenesisHash
               ? ""
               : "sequence 0 with a hash other than the genesis link";
  }
  ASSIGN_OR_RETURN(std::vector<v1::AuditRecord> records,
                   log.ReadAfter({}, checkpoint.sequence() - 1, 1));
  if (records.empty() || records[0].sequence() != checkpoint.sequence()) {
    bad_sequence = checkpoint.sequence();
    return absl::StrCat("the log no longer holds record ", checkpoint.sequence(),
                        " (records removed or the log replaced)");
  }
  if (records[0].hash() != checkpoint.head_hash()) {
    bad_sequence = checkpoint.sequence();
    return absl::StrCat("record ", checkpoint.sequence(), " has hash ", records[0].hash(),
                        ", the checkpoint signed ", checkpoint.head_hash(),
                        " (history rewritten at or before it)");
  }
  return "";
}

}  // namespace

absl::StatusOr<VerifyResponse> VerifyWithCheckpoints(AuditLog& log, const VerifyRequest& request,
                                                     const CheckpointKey* server_key) {
  if (request.checkpoints().empty()) return log.Verify(request);
  if (request.checkpoints_size() > kMaxCheckpointsPerVerify) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoints: more than ", kMaxCheckpointsPerVerify));
  }
  if (request.has_from_sequence() || request.has_to_sequence()) {
    return absl::InvalidArgumentError(
        "checkpoints: not with from_sequence or to_sequence (the whole chain is verified)");
  }
  for (int i = 0; i < request.checkpoints_size(); ++i) {
    RETURN_IF_ERROR(
        ValidateSignedCheckpoint(request.checkpoints(i), absl::StrCat("checkpoints[", i, "]")));
  }
  std::unique_ptr<CheckpointKey> pinned;
  if (!request.checkpoint_public_key_pem().empty()) {
    ASSIGN_OR_RETURN(pinned, CheckpointKey::ParsePublicKeyPem(request.checkpoint_public_key_pem(),
                                                              "checkpoint_public_key_pem"));
  }
  const CheckpointKey* key = pinned != nullptr ? pinned.get() : server_key;
  if (key == nullptr) {
    return absl::FailedPreconditionError(
        "checkpoints: no checkpoint_public_key_pem, and this audit_svc has no checkpoint key");
  }
  ASSIGN_OR_RETURN(VerifyResponse response, log.Verify(VerifyRequest()));
  for (int i = 0; i < request.checkpoints_size(); ++i) {
    const SignedCheckpoint& checkpoint = request.checkpoints(i);
    std::string fault = key->CheckSignature(checkpoint);
    std::optional<int64_t> bad_sequence;
    if (fault.empty()) {
      ASSIGN_OR_RETURN(fault, CheckExtended(log, checkpoint, bad_sequence));
    }
    if (fault.empty()) {
      response.set_checkpoints_verified(response.checkpoints_verified() + 1);
      continue;
    }
    if (response.ok()) {
      response.set_ok(false);
      if (bad_sequence) response.set_first_bad_sequence(*bad_sequence);
    }
    // The first fault found is reported; the chain's own detail, if any, stays first.
    if (response.detail().empty()) {
      response.set_detail(
          absl::StrCat("checkpoints[", i, "] (sequence ", checkpoint.sequence(), "): ", fault));
    }
  }
  return response;
}

}  // namespace sharedos::audit::core
