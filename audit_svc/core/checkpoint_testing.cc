#include "audit_svc/core/checkpoint_testing.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/event_codec.h"
#include "common/sqlite/database.h"
#include "common/status/status_macros.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::core::testing {
namespace {

using ::sharedos::common::sqlite::Database;

// Relinks records from `from` on (each hash from its predecessor's) and sets the head to the
// last record.
absl::Status Relink(Database& db, int64_t from) {
  std::string prev = storage::kGenesisHash;
  if (from > 1) {
    ASSIGN_OR_RETURN(auto before, db.Prepare("SELECT hash FROM audit_records WHERE sequence = ?1"));
    RETURN_IF_ERROR(before.BindInt64(1, from - 1));
    ASSIGN_OR_RETURN(bool row, before.Step());
    if (!row) return absl::NotFoundError(absl::StrCat("no record ", from - 1));
    prev = std::string(before.ColumnText(0));
  }
  ASSIGN_OR_RETURN(auto select, db.Prepare("SELECT sequence, event_json FROM audit_records "
                                           "WHERE sequence >= ?1 ORDER BY sequence"));
  RETURN_IF_ERROR(select.BindInt64(1, from));
  // Read first, then write: the rows are not updated under a statement still stepping them.
  std::vector<std::pair<int64_t, std::string>> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    rows.emplace_back(select.ColumnInt64(0), std::string(select.ColumnText(1)));
  }
  int64_t last = from - 1;
  for (const auto& [sequence, json] : rows) {
    last = sequence;
    const std::string hash = storage::ChainHash(prev, json);
    ASSIGN_OR_RETURN(auto update, db.Prepare("UPDATE audit_records SET prev_hash = ?2, hash = ?3 "
                                             "WHERE sequence = ?1"));
    RETURN_IF_ERROR(update.BindInt64(1, sequence));
    RETURN_IF_ERROR(update.BindText(2, prev));
    RETURN_IF_ERROR(update.BindText(3, hash));
    RETURN_IF_ERROR(update.Step().status());
    prev = hash;
  }
  ASSIGN_OR_RETURN(auto head,
                   db.Prepare("UPDATE audit_head SET sequence = ?1, hash = ?2 WHERE id = 1"));
  RETURN_IF_ERROR(head.BindInt64(1, last));
  RETURN_IF_ERROR(head.BindText(2, prev));
  return head.Step().status();
}

}  // namespace

absl::Status RewriteDeniedAsAllowed(const std::string& db_path, int64_t sequence) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(db_path));
  ASSIGN_OR_RETURN(
      auto edit, db->Prepare("UPDATE audit_records SET outcome = ?2, event_json = "
                             "replace(event_json, '\"AUDIT_OUTCOME_DENIED\"', "
                             "'\"AUDIT_OUTCOME_ALLOWED\"') WHERE sequence = ?1 AND outcome = ?3"));
  RETURN_IF_ERROR(edit.BindInt64(1, sequence));
  RETURN_IF_ERROR(edit.BindInt64(2, protocol::v1::AUDIT_OUTCOME_ALLOWED));
  RETURN_IF_ERROR(edit.BindInt64(3, protocol::v1::AUDIT_OUTCOME_DENIED));
  RETURN_IF_ERROR(edit.Step().status());
  ASSIGN_OR_RETURN(auto changed, db->Prepare("SELECT changes()"));
  ASSIGN_OR_RETURN(bool row, changed.Step());
  if (!row || changed.ColumnInt64(0) != 1) {
    return absl::NotFoundError(absl::StrCat("record ", sequence, ": absent or not denied"));
  }
  return Relink(*db, sequence);
}

absl::Status TruncateTail(const std::string& db_path, int64_t keep) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(db_path));
  for (const char* sql : {"DELETE FROM audit_records WHERE sequence > ?1",
                          "DELETE FROM audit_keys WHERE sequence > ?1"}) {
    ASSIGN_OR_RETURN(auto statement, db->Prepare(sql));
    RETURN_IF_ERROR(statement.BindInt64(1, keep));
    RETURN_IF_ERROR(statement.Step().status());
  }
  return Relink(*db, keep + 1);
}

absl::Status WriteNewEd25519Key(const std::string& path) {
  EVP_PKEY* key = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  const bool made =
      ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!made) return absl::InternalError("Ed25519 key generation failed");
  FILE* file = std::fopen(path.c_str(), "w");
  const bool written = file != nullptr && chmod(path.c_str(), 0600) == 0 &&
                       PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (file != nullptr) std::fclose(file);
  EVP_PKEY_free(key);
  return written ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

}  // namespace sharedos::audit::core::testing
