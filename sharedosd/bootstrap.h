#ifndef SHAREDOS_SHAREDOSD_BOOTSTRAP_H_
#define SHAREDOS_SHAREDOSD_BOOTSTRAP_H_

#include <string>

#include "absl/status/statusor.h"

namespace sharedos::sharedosd {

// The files sharedosd keeps in its data directory.
struct DataDir {
  std::string root;
  std::string credentials() const { return root + "/credentials.json"; }
  std::string admin_token() const { return root + "/admin.token"; }
  std::string host_token() const { return root + "/host.token"; }
  // The built-in files provider's per-owner workspaces.
  std::string files_root() const { return root + "/files"; }
  // The authorizer's lease-signing secret.
  std::string lease_secret() const { return root + "/lease.secret"; }
  // The envelope's MCP execution-token secret.
  std::string mcp_secret() const { return root + "/mcp.secret"; }
  std::string audit_db() const { return root + "/audit.db"; }
  std::string grants_db() const { return root + "/grants.db"; }
  std::string outbox(const std::string& writer) const { return root + "/" + writer + ".outbox"; }
};

// Prepares a data directory for first use, idempotently: creates it and its files/ workspace
// root (0700), and on first start mints two random bearer tokens — admin (operators,
// sharedosctl) and host (product backends; scope: the demo world `world-demo`, every owner) —
// each in its own 0600 file (sharedosd's own services call each other in process and need
// none), plus credentials.json holding only their SHA-256 digests, and a random lease-signing
// secret for the authorizer (lease.secret, 0600) and an execution-token secret for
// the MCP front door (mcp.secret, 0600), each minted when missing. Later starts reuse them.
// Errors: FAILED_PRECONDITION (the directory or a file cannot be created or read, the directory
// is not writable — e.g. on a read-only file system —, or only some of the token files exist).
absl::StatusOr<DataDir> PrepareDataDir(const std::string& root);

}  // namespace sharedos::sharedosd

#endif  // SHAREDOS_SHAREDOSD_BOOTSTRAP_H_
