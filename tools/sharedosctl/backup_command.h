// sharedosctl backup: a consistent online snapshot of a running sharedosd's two SQLite stores
// (audit.db and grants.db) with the signed checkpoint that covers it (docs/operations.md,
// "Backup and restore"; docs/adr/0021).

#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_BACKUP_COMMAND_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_BACKUP_COMMAND_H_

#include <ostream>

#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

// --data_dir: the running sharedosd's data directory (read on this host); --to: a new or empty
// directory. In order: a signed checkpoint is asked of the running log (AuditLog.Checkpoint, the
// operator's token) and written to <to>/checkpoint.jsonl — taken first, so the copied log extends
// it; grants.db's write lock is taken (BEGIN IMMEDIATE: no grant-store mutation is in flight or
// starts), audit.db then grants.db are copied with SQLite's online backup API into <to>, and the
// lock is released. So the copied grant store is never behind the copied log (its anchor accepts
// it). Exit 0 with a summary; 1 when a step failed (the directory then holds no complete backup).
int Backup(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
           std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_BACKUP_COMMAND_H_
