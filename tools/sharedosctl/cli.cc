#include "tools/sharedosctl/cli.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharedos::sharedosctl {
namespace {

struct CommandSpec {
  const char* name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
  const char* summary;
};

const std::vector<CommandSpec>& Commands() {
  static const auto* commands = new std::vector<CommandSpec>{
      {"grants issue",
       {"file"},
       {"idempotency_key", "any_owner"},
       "issue a root CapabilityGrant from a textproto or JSON file; a capability without an "
       "owner is pinned to a human issuer, or, with --any_owner, reaches any owner of the "
       "namespace (shown as @(any owner))"},
      {"grants derive",
       {"namespace", "parent", "file"},
       {},
       "derive a child grant (file: a DerivationRequest)"},
      {"grants revoke", {"namespace", "id"}, {}, "revoke a grant"},
      {"grants list",
       {"namespace"},
       {"subject", "issuer", "include_revoked"},
       "list a namespace's grants (every page)"},
      {"grants show", {"namespace", "id"}, {}, "show one grant"},
      {"grants accept-restore",
       {"reason"},
       {},
       "accept a grant store restored behind the audit log (an older grants.db, a rolled-back "
       "database): re-applies the revocations the log holds, records the acceptance and prints "
       "what the restore lost; the operator (\"*\") only"},
      {"policy put", {"file"}, {}, "replace a namespace's host policy (file: a HostPolicy)"},
      {"policy get", {"namespace"}, {}, "show a namespace's host policy"},
      {"escalations list",
       {"namespace"},
       {"status"},
       "the review queue (status: pending|approved|denied)"},
      {"escalations show", {"id"}, {}, "show one escalation"},
      {"escalations approve",
       {"id"},
       {"reviewer", "on_behalf", "expires_at", "max_uses", "grant_id", "note"},
       "approve with the reviewer's credential (--token_file), issuing the requested grant "
       "(optionally narrowed); an admin of the namespace says --on_behalf (recorded); --note: "
       "a note kept on the escalation (at most 1000 characters, not audited)"},
      {"escalations deny",
       {"id"},
       {"reviewer", "on_behalf", "note"},
       "deny a pending escalation (as approve: the reviewer, or an admin --on_behalf; --note)"},
      {"credentials issue",
       {"role", "principal"},
       {"id", "namespace", "owner", "authority"},
       "issue a credential (role: admin|host|reviewer|service; principal: kind:id; namespace, "
       "owner, authority: comma-separated scope — a host's authorities default to its owners); "
       "prints its secret once (\"secret: ...\")"},
      {"credentials list", {}, {"include_revoked"}, "the credentials you manage (never a secret)"},
      {"credentials revoke", {"id"}, {}, "revoke a credential (refused on its next call)"},
      {"credentials rotate",
       {"id"},
       {},
       "a new secret for a credential (printed once): your own (then known to you alone), or "
       "one you manage that is not a human's"},
      {"audit query",
       {},
       {"namespace", "trace", "execution", "type", "outcome", "reason", "source", "actor", "since",
        "until", "limit"},
       "query the audit log (type: a reference name such as tool.invoked; actor: kind:id; "
       "since/until: RFC 3339, on the event's time, until exclusive)"},
      {"audit tail",
       {},
       {"namespace", "trace", "execution", "type", "outcome", "reason", "source", "actor", "since",
        "until", "from"},
       "stream audit records until Ctrl-C (from: first sequence; default: new ones)"},
      {"audit verify",
       {},
       {"from", "to", "checkpoint", "checkpoint_public_key", "checkpoints", "public_key"},
       "verify the hash chain (exit 0 only when it verifies); with --checkpoint=FILE (the JSON "
       "lines of `audit checkpoint` or --checkpoint_file) also prove the log still extends every "
       "checkpoint in it, signed under the PEM public key --checkpoint_public_key (default: "
       "the server's own key); with --checkpoints=LOG (the server's exported log: its "
       "audit.checkpoint lines are read, others skipped) and --public_key=PEM (required), the "
       "same for every checkpoint logged, naming the first the log no longer extends"},
      {"audit export",
       {"format"},
       {"since", "follow", "with_checkpoint", "namespace"},
       "the audit record for a SIEM, one JSON object per line (format: jsonl, schema "
       "sharedos.audit.export/1 | ocsf, OCSF 1.3.0; docs/schemas/); since: the last sequence "
       "already exported (default 0: from the first); follow: then stream new records and the "
       "signed checkpoints made meanwhile until Ctrl-C; with_checkpoint: end with the head "
       "signed now (not with follow)"},
      {"audit checkpoint",
       {},
       {"public_key_out"},
       "sign the audit head now; prints the signed checkpoint as one JSON line (append it to a "
       "file kept apart: `>> checkpoints.jsonl`); public_key_out: also write the PEM public key"},
      {"audit witnessed",
       {},
       {"key_id"},
       "on a witness (an audit service started with --witness_public_key): every checkpoint it "
       "accepted, oldest first, one audit.checkpoint line each — the file `audit verify "
       "--checkpoints=FILE --public_key=PEM` reads against the signer's log; key_id: only that "
       "signer's (the first 16 hex digits the signer printed at start)"},
      {"explain",
       {"id"},
       {},
       "why was this refused? id: a record's sequence, an event id or an escalation id; says "
       "who refused (source), the reason and cause and what they mean, the grants considered and "
       "why each did not match, the host ceiling and policy, the authority that would have "
       "allowed it, and the next step (read with the caller's credential)"},
      {"backup",
       {"data_dir", "to"},
       {},
       "a consistent online copy of a running sharedosd's audit.db and grants.db (SQLite's backup "
       "API, on this host) into --to (new or empty), with a signed checkpoint taken just before "
       "(checkpoint.jsonl, checkpoint.pub.pem); the operator's token"},
      {"status",
       {},
       {"targets"},
       "each process's health, version, services (their dependencies and stores), audit head and "
       "audit outboxes (targets: host:port,...; default --target); exit 0 only when all serve"},
      {"mcp-config",
       {"cli", "url"},
       {"server"},
       "the recipe (JSON: files, env, args) that starts an agent CLI on an MCP turn: cli one of "
       "claude, codex, gemini, opencode, opencode-serve (one warm `opencode serve`, a request per "
       "turn), pi; url the turn's OpenTurnResponse.mcp.url; server the MCP server's name in the "
       "CLI's configuration (default sharedos). Offline; the token stays in $SHAREDOS_MCP_TOKEN "
       "(opencode-serve: in the per-turn request)"},
      {"login",
       {"issuer", "client_id"},
       {"scope", "resource", "ca_file", "allow_loopback_http"},
       "sign in at the organisation's identity provider (OAuth 2 device authorization grant): "
       "prints a URL and a code to approve in any browser, waits, and keeps the access token "
       "(mode 0600, directory 0700) in $SHAREDOS_CONFIG_DIR/token, else "
       "$XDG_CONFIG_HOME/sharedos/token, else ~/.config/sharedos/token; later commands use it "
       "when no --token_file is given. issuer: the provider's issuer URL (https; http on "
       "loopback only with --allow_loopback_http); client_id: its device-flow client; scope "
       "(default openid); resource: the services' audience; ca_file: CA for the provider"},
      {"turn",
       {},
       {"host_token_file"},
       "run the demo turn in world-demo with the host token (default "
       "sharedos-data/host.token): read Workspace/notes.txt, create Workspace/summary.txt; a "
       "refused write escalates and the last line is \"escalation: <id>\""},
  };
  return *commands;
}

const std::set<std::string>& BoolFlags() {
  static const auto* flags = new std::set<std::string>{"json",
                                                       "include_revoked",
                                                       "help",
                                                       "on_behalf",
                                                       "any_owner",
                                                       "follow",
                                                       "with_checkpoint",
                                                       "allow_loopback_http"};
  return *flags;
}

const std::set<std::string>& GlobalFlags() {
  static const auto* flags =
      new std::set<std::string>{"target", "token_file",      "json",           "timeout",
                                "tls_ca", "tls_client_cert", "tls_client_key", "tls_server_name"};
  return *flags;
}

bool KnownFlag(const std::string& name) {
  if (GlobalFlags().count(name) > 0) return true;
  for (const CommandSpec& spec : Commands()) {
    for (const auto* list : {&spec.required, &spec.optional}) {
      for (const std::string& flag : *list) {
        if (flag == name) return true;
      }
    }
  }
  return false;
}

bool Truthy(const std::string& value) {
  return value.empty() || value == "true" || value == "1" || value == "yes";
}

}  // namespace

std::string Invocation::Get(const std::string& name) const {
  auto it = flags.find(name);
  return it == flags.end() ? "" : it->second;
}

bool Invocation::GetBool(const std::string& name) const {
  auto it = flags.find(name);
  return it != flags.end() && Truthy(it->second);
}

absl::StatusOr<int64_t> ParseInt(const std::string& flag, const std::string& value) {
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": \"", value, "\" is not an integer"));
  }
  return parsed;
}

namespace {

// The command words and the flags of a command line, in the order given.
struct SplitArgs {
  std::vector<std::string> words;
  std::map<std::string, std::string> given;
  bool help = false;
};

// Splits `args` into words and flags ("--name=value", "--name value", or "--name" for a
// boolean). Errors: a bare "--", a nameless or unknown flag, a missing value, a flag twice.
absl::StatusOr<SplitArgs> Split(const std::vector<std::string>& args) {
  SplitArgs split;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      return absl::InvalidArgumentError("unexpected \"--\"");
    }
    if (arg.rfind("--", 0) != 0) {
      split.words.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("bad flag \"", arg, "\""));
    if (name == "help") {
      split.help = true;
      continue;
    }
    if (!KnownFlag(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (!has_value && BoolFlags().count(name) == 0) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    if (!split.given.emplace(name, value).second) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given twice"));
    }
  }
  return split;
}

// One global flag into `*globals`.
absl::Status ApplyGlobalFlag(const std::string& name, const std::string& value,
                             GlobalOptions* globals) {
  if (name == "target") {
    if (value.empty()) return absl::InvalidArgumentError("--target must not be empty");
    globals->target = value;
  } else if (name == "token_file") {
    if (value.empty()) return absl::InvalidArgumentError("--token_file must not be empty");
    globals->token_file = value;
    globals->token_file_given = true;
  } else if (name == "tls_ca" || name == "tls_client_cert" || name == "tls_client_key" ||
             name == "tls_server_name") {
    if (value.empty())
      return absl::InvalidArgumentError(absl::StrCat("--", name, " must not be empty"));
    std::string* field = name == "tls_ca"            ? &globals->tls.ca_file
                         : name == "tls_client_cert" ? &globals->tls.client_cert_file
                         : name == "tls_client_key"  ? &globals->tls.client_key_file
                                                     : &globals->tls.server_name;
    *field = value;
  } else if (name == "json") {
    globals->json = Truthy(value);
  } else if (name == "timeout") {
    absl::Duration timeout;
    if (!absl::ParseDuration(value, &timeout) || timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--timeout: \"", value, "\" is not a positive duration (e.g. 10s)"));
    }
    globals->timeout = timeout;
  }
  return absl::OkStatus();
}

// Moves the global flags out of `given` into `*globals`.
absl::Status ApplyGlobalFlags(std::map<std::string, std::string>& given, GlobalOptions* globals) {
  for (const std::string& name : GlobalFlags()) {
    auto it = given.find(name);
    if (it == given.end()) continue;
    const std::string value = it->second;
    given.erase(it);
    if (absl::Status applied = ApplyGlobalFlag(name, value, globals); !applied.ok()) {
      return applied;
    }
  }
  return absl::OkStatus();
}

// The command's own flags: each allowed, none empty but a boolean, every required one given.
absl::Status CheckCommandFlags(const CommandSpec& spec,
                               const std::map<std::string, std::string>& given) {
  std::set<std::string> allowed(spec.required.begin(), spec.required.end());
  allowed.insert(spec.optional.begin(), spec.optional.end());
  for (const auto& [name, value] : given) {
    if (allowed.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " for \"", spec.name, "\""));
    }
    if (value.empty() && BoolFlags().count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " must not be empty"));
    }
  }
  for (const std::string& name : spec.required) {
    if (given.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("\"", spec.name, "\" needs --", name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Invocation> ParseArgs(const std::vector<std::string>& args, GlobalOptions* globals) {
  absl::StatusOr<SplitArgs> split = Split(args);
  if (!split.ok()) return split.status();
  Invocation invocation;
  invocation.help = split->help;
  if (invocation.help) return invocation;
  if (absl::Status applied = ApplyGlobalFlags(split->given, globals); !applied.ok()) {
    return applied;
  }
  if (split->words.empty()) return absl::InvalidArgumentError("no command given");
  invocation.command = absl::StrJoin(split->words, " ");
  const CommandSpec* spec = nullptr;
  for (const CommandSpec& candidate : Commands()) {
    if (invocation.command == candidate.name) spec = &candidate;
  }
  if (spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", invocation.command, "\""));
  }
  if (absl::Status checked = CheckCommandFlags(*spec, split->given); !checked.ok()) {
    return checked;
  }
  invocation.flags = std::move(split->given);
  return invocation;
}

std::string UsageText() {
  std::string text =
      "usage: sharedosctl [global flags] <command> [flags]\n"
      "\n"
      "Global flags:\n"
      "  --target=HOST:PORT   sharedosd address (default: $SHAREDOS_TARGET if set, else\n"
      "                       127.0.0.1:50051)\n"
      "  --token_file=PATH    token file (default: the token `login` kept, if any, else\n"
      "                       sharedos-data/admin.token)\n"
      "  --json               print the response protos as JSON\n"
      "  --timeout=DURATION   per-call deadline (default 10s)\n"
      "  --tls_ca=PATH        PEM CA the server's certificate must chain to; set: TLS\n"
      "                       (required for a target off loopback)\n"
      "  --tls_client_cert=PATH, --tls_client_key=PATH\n"
      "                       certificate and key presented to a server that requires one\n"
      "  --tls_server_name=NAME\n"
      "                       name expected in the server's certificate (default: the\n"
      "                       target's host)\n"
      "\n"
      "Commands:\n";
  for (const CommandSpec& spec : Commands()) {
    std::vector<std::string> flags;
    for (const std::string& flag : spec.required) flags.push_back(absl::StrCat("--", flag));
    for (const std::string& flag : spec.optional) flags.push_back(absl::StrCat("[--", flag, "]"));
    absl::StrAppend(&text, "  ", spec.name, " ", absl::StrJoin(flags, " "), "\n      ",
                    spec.summary, "\n");
  }
  absl::StrAppend(&text,
                  "\nAddresses are kind:id (human:…, agent:…, group:…, service:…); times are "
                  "RFC 3339.\nExit codes: 0 ok, 1 a refused or failed call, 2 usage.\n");
  return text;
}

}  // namespace sharedos::sharedosctl
