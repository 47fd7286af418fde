#!/usr/bin/env python3
"""Checks deploy/k8s and deploy/compose against the binaries (//tests/deploy:manifests_test).

  manifests_check.py to_json OUT.json YAML...     the Kubernetes objects, for validate_k8s.js
  manifests_check.py broken IN.json OUT.json      copies of a Deployment, each broken once
  manifests_check.py check --images=F --flags_dir=D --probe=BIN --certs=D --secrets=D
                           --compose=F [--compose_oidc=F] YAML...
                                                  the consistency checks below; exit 1 naming
                                                  every problem

Consistency: every --flag a container passes exists in the binary its image holds (the binary's
--helpfull, saved as <flags_dir>/<binary>.flags); the image is one of deploy/images.txt and
listens on the port images.txt gives it (its HEALTHCHECK probes that port); containerPorts,
Services and probes use the port of --port (and --mcp_port); probes run health_probe with flags it
accepts; every volumeMount is a declared volume; every Secret, claim and secret key a pod mounts
exists; every absolute path a flag names lies on a mount (a Secret's key, the data volume) or is
shipped in the image; every <peer>_target names a Service (compose: a service) at the port that
peer listens on. The same for the compose file (bind mounts resolved against gen-certs.sh's and
gen-secrets.sh's directories).

The PostgreSQL variant (deploy/k8s/postgres, compose.postgres.yaml) adds: the PostgreSQL image
(images.txt's binary "-") takes no flags, listens on its images.txt port and mounts its TLS
pair and password file; a --db=postgresql:// URI carries no password (userinfo or query), names
a Service (compose: a service) at the PostgreSQL port, and its container gets the password from
a libpq password file on a mount (PGPASSFILE) or from a Secret's key (PGPASSWORD via
secretKeyRef, never a literal), with PGSSLMODE=verify-full and PGSSLROOTCERT on a mount; the
generated password appears in no file; several envelope replicas each name themselves
(--replica_name) and every replica as a peer (--replica_peers, --replica_mcp_peers) at the
address and port it listens on — on Kubernetes a StatefulSet (stable pod names, $(POD_NAME)) with
a headless Service — and keep their data volume to themselves; PostgreSQL is reachable only from
the audit and grant-store pods (NetworkPolicy), and replicated envelopes from each other.

The console: every console container (Kubernetes and compose) passes --console_public_origin as
scheme://host[:port] — forms posted from any other origin are refused as cross-site, so a console
behind a published port or an ingress without it cannot take a decision (on Kubernetes the value
is the operator's to set, marked OPERATOR in console.yaml). The compose OIDC profile
(--compose_oidc, an override of --compose): every SharedOS service of the compose file gets
--oidc_config naming a file on a mount of the profile; the console's config names its client
(client_id, a client_secret_file on one of the console's mounts, redirect_uri = its public origin
+ /oidc/callback), and the provider container registers that redirect URI and reads the same
secret file.

One token per service (docs/adr/0014-tenants-apart.md, T4), both variants: gen-secrets.sh's
directory holds a token for each of audit, grantstore, authorizer, envelope and console in a directory of
its own (<service>-token/<service>.token, owner-only), credentials.json names each as the
service credential "<service>" (principal service:<service>) with that token's digest, no two
credentials share a token, and no shared service token exists (no service-token/, no credential
"services", no Secret sharedos-service-token); each Secret sharedos-<service>-token holds only
<service>.token. A service's container mounts no other service's token (no volume, projected
source, env or bind mount of it), and every --*_token_file it passes is its own
<service>.token, from its own Secret (compose: its own <service>-token/ directory).
"""
import urllib.parse
import copy
import hashlib
import json
import os
import re
import subprocess
import sys

import yaml

SHIPPED = {"/etc/sharedos/standard_tools.textproto"}
PROBE = "/usr/local/bin/health_probe"
# The PostgreSQL image (deploy/postgres/): its probe, and the files its entrypoint reads.
POSTGRES_PROBE = ["/usr/local/bin/sharedos-healthcheck"]
POSTGRES_FILES = {"SHAREDOS_POSTGRES_PASSWORD_FILE": "/etc/sharedos/postgres/postgres.password",
                  "SHAREDOS_POSTGRES_TLS_DIR": "/etc/sharedos/tls"}
ENVELOPE = "envelope_svc"
AUDIT = "audit_svc"
# The service each binary runs as (its principal service:<name>) and the name of its token.
SERVICES = {"audit_svc": "audit", "grantstore_svc": "grantstore",
            "authorizer_svc": "authorizer", "envelope_svc": "envelope", "console": "console"}
# A token's Secret (Kubernetes) and directory (gen-secrets.sh, compose): sharedos-<x>-token and
# <x>-token, x a service; "service" is the token every service once shared.
TOKEN_SECRET = re.compile(r"sharedos-([a-z0-9]+)-token")
TOKEN_DIR = re.compile(r"([a-z0-9]+)-token")
CONSOLE = "console"
ORIGIN = re.compile(r"https?://[^/?#@ ]+")
SHARED = "service"


def load_yaml(paths):
    objects = []
    for path in paths:
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    doc["__file"] = os.path.basename(path)
                    objects.append(doc)
    return objects


def clean(obj):
    return {k: v for k, v in obj.items() if k != "__file"}


def flag_values(args):
    """{"port": "50053", ...} from ["--port=50053", ...]; problems for malformed entries."""
    values, problems = {}, []
    for arg in args:
        m = re.fullmatch(r"--([a-z0-9_]+)=(.*)", str(arg))
        if not m:
            problems.append(f"argument {arg!r} is not --flag=value")
            continue
        values[m.group(1)] = m.group(2)
    return values, problems


class Checker:
    def __init__(self, opts):
        self.problems = []
        self.images = {}  # image -> (binary basename, port)
        with open(opts["images"]) as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    image, binary, port = line.split()
                    self.images[image] = (os.path.basename(binary), port)
        self.flags_dir = opts["flags_dir"]
        self.probe = opts["probe"]
        self.certs = opts["certs"]
        self.secrets = opts["secrets"]
        self.postgres_port = next((port for binary, port in self.images.values() if binary == "-"), None)
        with open(os.path.join(self.secrets, "postgres", "postgres.password")) as f:
            self.password = f.readline().strip()
        if len(self.password) < 16:
            raise SystemExit("the generated PostgreSQL password is missing or short")

    def check_service_tokens(self):
        """gen-secrets.sh's directory: one owner-only token per service in its own directory,
        each the digest of its service's credential; none shared, no shared service token."""
        where = "gen-secrets.sh"
        if os.path.exists(os.path.join(self.secrets, f"{SHARED}-token")):
            self.fail(where, f"{SHARED}-token/ exists: one token shared by every service (ADR 0014: each its own)")
        with open(os.path.join(self.secrets, "credentials", "credentials.json")) as f:
            entries = json.load(f)["credentials"]
        services = {e.get("name"): e for e in entries if e.get("role") == "service"}
        if set(services) != set(SERVICES.values()):
            self.fail(where, f"service credentials {sorted(services)}, want one per service {sorted(SERVICES.values())}")
        digests = {}
        for e in entries:
            digests.setdefault(e.get("token_sha256"), []).append(e.get("name"))
        for names in digests.values():
            if len(names) > 1:
                self.fail(where, f"credentials {sorted(names)} share one token")
        for name, entry in services.items():
            if entry.get("principal", f"service:{name}") != f"service:{name}":
                self.fail(where, f"service credential {name} names principal {entry.get('principal')}, not service:{name}")
            directory = os.path.join(self.secrets, f"{name}-token")
            files = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
            if files != [f"{name}.token"]:
                self.fail(where, f"{name}-token/ holds {files}, want only {name}.token (mounted into {name} alone)")
                continue
            path = os.path.join(directory, f"{name}.token")
            if os.stat(path).st_mode & 0o077:
                self.fail(where, f"{name}-token/{name}.token is mode {oct(os.stat(path).st_mode & 0o777)}, not owner-only")
            with open(path) as f:
                token = "".join(f.readline().split())
            if hashlib.sha256(token.encode()).hexdigest() != entry.get("token_sha256"):
                self.fail(where, f"credential {name}'s digest is not that of {name}-token/{name}.token")

    def check_own_token(self, where, own, values, token_mounts):
        """token_mounts: {mount path: the service whose token is mounted there}. A service
        mounts no other service's token, and each --*_token_file is its own <own>.token."""
        for path, holder in token_mounts.items():
            if holder == SHARED:
                self.fail(where, f"mounts the shared service token at {path}: each service has its own (ADR 0014)")
            elif holder != own:
                self.fail(where, f"mounts {holder}'s token at {path}: a service holds only its own token")
        for name, value in values.items():
            if not name.endswith("_token_file"):
                continue
            under = [m for m in token_mounts if value.startswith(m.rstrip("/") + "/")]
            mount = max(under, key=len) if under else None
            if mount is None or token_mounts[mount] != own or os.path.relpath(value, mount) != f"{own}.token":
                self.fail(where, f"--{name}={value} is not {own}'s own token ({own}.token from {own}'s token secret)")

    def check_checkpoint_key(self, where, binary, values):
        """Every audit log signs checkpoints with the deployment's one key, given from a secret
        (docs/adr/0019-checkpoints-on-by-default.md); check_paths checks the file is mounted."""
        if binary == AUDIT and not values.get("checkpoint_key_file"):
            self.fail(where, "audit_svc without --checkpoint_key_file: its checkpoints are signed with the deployment's key (gen-secrets.sh checkpoint/)")

    def check_console_origin(self, where, binary, values):
        """The console takes forms only from its own origin: where browsers reach it (a published
        port, an ingress) must be --console_public_origin."""
        if binary == CONSOLE and not ORIGIN.fullmatch(self.resolve(values.get("console_public_origin", ""))):
            self.fail(where, "the console without --console_public_origin=scheme://host[:port]: forms posted from where browsers reach it are refused as cross-site")

    def check_compose_oidc(self, base_path, path):
        with open(base_path) as f:
            base = yaml.safe_load(f)["services"]
        with open(path) as f:
            overlay = yaml.safe_load(f)["services"]
        file, here = os.path.basename(path), os.path.dirname(path)

        def mounts_of(service):
            out = {}
            for v in (service or {}).get("volumes", []):
                source, target = self.resolve(v).split(":")[:2]
                out[target] = os.path.normpath(os.path.join(here, source))
            return out

        def on_host(mounts, value):
            under = [m for m in mounts if value.startswith(m.rstrip("/") + "/")]
            if not under:
                return None
            m = max(under, key=len)
            return os.path.join(mounts[m], os.path.relpath(value, m))

        provider = overlay.get("oidc") or {}
        provider_values, _ = flag_values(provider.get("command", []))
        for name, s in base.items():
            binary, _ = self.image_of(f"{file}: {name}", s.get("image"))
            if binary not in SERVICES:
                continue
            where = f"{file}: {name}"
            o = overlay.get(name)
            values = self.check_flags(where, binary, (o or {}).get("command", []))
            config = values.get("oidc_config")
            if not config:
                self.fail(where, "not given --oidc_config by the OIDC profile")
                continue
            mounts = mounts_of(o)
            host_file = on_host(mounts, config)
            if host_file is None:
                self.fail(where, f"--oidc_config={config} is on no mount of the OIDC profile")
                continue
            try:
                with open(host_file) as f:
                    cfg = json.load(f)
            except (OSError, ValueError) as e:
                self.fail(where, f"--oidc_config={config}: {host_file} does not load: {e}")
                continue
            if binary != CONSOLE:
                continue
            client = cfg.get("console") or {}
            if not all(client.get(k) for k in ("client_id", "client_secret_file", "redirect_uri")):
                self.fail(where, "its OIDC config names no console client (client_id, client_secret_file, redirect_uri): the console cannot sign anyone in")
                continue
            secret = on_host(mounts, client["client_secret_file"])
            if secret is None:
                self.fail(where, f"console.client_secret_file {client['client_secret_file']} is on no mount of the console")
            base_values, _ = flag_values(s.get("command", []))
            origin = self.resolve(base_values.get("console_public_origin", ""))
            if client["redirect_uri"] != origin + "/oidc/callback":
                self.fail(where, f"console.redirect_uri {client['redirect_uri']} is not its public origin {origin} + /oidc/callback")
            registered = self.resolve(provider_values.get("console_redirect_uri", ""))
            if registered != client["redirect_uri"]:
                self.fail(f"{file}: oidc", f"the provider registers the console's redirect URI {registered!r}, the console sends {client['redirect_uri']!r}")
            provider_secret = on_host(mounts_of(provider), provider_values.get("console_secret_file", "/"))
            if secret is not None and provider_secret != secret:
                self.fail(f"{file}: oidc", f"the provider's --console_secret_file is not the console's client secret ({secret})")

    def check_no_password(self, paths):
        """The generated PostgreSQL password appears in no manifest or compose file."""
        for path in paths:
            with open(path) as f:
                if self.password in f.read():
                    self.fail(os.path.basename(path), "holds the PostgreSQL password")

    def check_db(self, where, values, env, mounts, ports_of, secrets=None):
        """A --db=postgres(ql):// URI: no password in it; the password, TLS mode and CA from the
        container's environment (env: {name: value or ("secret", name, key)})."""
        db = values.get("db", "")
        if not re.match(r"postgres(ql)?://", db):
            return
        uri = urllib.parse.urlsplit(db)
        if uri.password is not None or ":" in (uri.netloc.rpartition("@")[0]):
            self.fail(where, "--db carries a password: libpq reads it from PGPASSFILE or PGPASSWORD")
        query = urllib.parse.parse_qs(uri.query)
        if any(k.lower() in ("password", "passfile") for k in query):
            self.fail(where, "--db carries a password option: libpq reads it from PGPASSFILE or PGPASSWORD")
        if not uri.username:
            self.fail(where, "--db names no role (postgresql://<role>@host:port/db)")
        host = (uri.hostname or "").split(".")[0]
        if ports_of.get(host) != self.postgres_port or str(uri.port) != str(self.postgres_port):
            self.fail(where, f"--db host {uri.hostname}:{uri.port} is not the PostgreSQL service at {self.postgres_port}")
        password = env.get("PGPASSWORD")
        passfile = env.get("PGPASSFILE")
        if isinstance(password, str):
            self.fail(where, "PGPASSWORD is a literal value: take it from a Secret (secretKeyRef) or use PGPASSFILE")
        elif isinstance(password, tuple):
            _, secret, key = password
            if secrets is None or key not in secrets.get(secret, set()):
                self.fail(where, f"PGPASSWORD from Secret {secret} key {key}, which k8s-secrets.sh does not make")
        elif passfile is None:
            self.fail(where, "a PostgreSQL --db without PGPASSFILE or PGPASSWORD: the password has no source")
        if passfile is not None:
            self.check_paths(where, {"PGPASSFILE": passfile}, mounts)
        if env.get("PGSSLMODE") != "verify-full":
            self.fail(where, f"PGSSLMODE={env.get('PGSSLMODE')}: the database is reached with TLS verify-full")
        if not isinstance(env.get("PGSSLROOTCERT"), str):
            self.fail(where, "no PGSSLROOTCERT: the CA verifying the database")
        else:
            self.check_paths(where, {"PGSSLROOTCERT": env["PGSSLROOTCERT"]}, mounts)

    def check_postgres(self, where, args, env, mounts):
        if args:
            self.fail(where, f"the PostgreSQL image takes no arguments: {args!r}")
        files = {name: env.get(name) if isinstance(env.get(name), str) else default
                 for name, default in POSTGRES_FILES.items()}
        tls = files.pop("SHAREDOS_POSTGRES_TLS_DIR")
        files["tls.crt"] = tls.rstrip("/") + "/tls.crt"
        files["tls.key"] = tls.rstrip("/") + "/tls.key"
        self.check_paths(where, files, mounts)

    def check_replicas(self, where, replicas, expected):
        """replicas: [(where, values)] of every envelope replica; expected(name) -> (grpc, mcp)
        addresses its peers must use."""
        names = [values.get("replica_name") for _, values in replicas]
        for (w, values), name in zip(replicas, names):
            if not name:
                self.fail(w, f"one of {len(replicas)} envelope replicas without --replica_name: a turn's calls cannot reach its owner (ADR 0011)")
                continue
            for flag, index in (("replica_peers", 0), ("replica_mcp_peers", 1)):
                entries = [e for e in values.get(flag, "").split(",") if e]
                peers = dict(e.split("=", 1) for e in entries if "=" in e)
                if len(peers) != len(entries):
                    self.fail(w, f"--{flag}: entries are <name>=<address>")
                if set(peers) != set(names):
                    self.fail(w, f"--{flag} names {sorted(peers)}, the replicas are {sorted(n for n in names if n)}")
                for peer, address in peers.items():
                    want = expected(peer)
                    if want is None or address not in want[index]:
                        self.fail(w, f"--{flag}: {peer}={address}, but {peer} is reached at {want[index] if want else 'no address'}")

    def fail(self, where, message):
        self.problems.append(f"{where}: {message}")

    def binary_flags(self, binary):
        path = os.path.join(self.flags_dir, binary + ".flags")
        with open(path) as f:
            flags = {line.strip() for line in f if line.strip()}
        if "port" not in flags:
            raise SystemExit(f"{path}: no --port among the flags: --helpfull was not read")
        return flags

    def image_of(self, where, image):
        m = re.fullmatch(r"localhost/([a-z0-9-]+):dev", image or "")
        if not m or m.group(1) not in self.images:
            self.fail(where, f"image {image!r} is not one build-images.sh makes (images.txt)")
            return None, None
        return self.images[m.group(1)]

    def check_flags(self, where, binary, args):
        values, problems = flag_values(args)
        for p in problems:
            self.fail(where, p)
        known = self.binary_flags(binary)
        for name in values:
            if name not in known:
                self.fail(where, f"--{name} is not a flag of {binary}")
        return values

    def check_probe(self, where, command, port):
        if not command or command[0] != PROBE:
            self.fail(where, f"probe does not run {PROBE}: {command!r}")
            return
        values, problems = flag_values(command[1:])
        for p in problems:
            self.fail(where, p)
        if values.get("target") != f"127.0.0.1:{port}":
            self.fail(where, f"probe --target={values.get('target')} is not the --port {port}")
        run = subprocess.run([self.probe] + [a for a in command[1:] if not a.startswith("--target=")]
                             + ["--target=127.0.0.1:1", "--timeout=1s"],
                             capture_output=True, text=True)
        if run.returncode == 2:
            self.fail(where, f"health_probe refuses the probe's flags: {run.stderr.strip()}")

    def check_paths(self, where, values, mounts):
        """mounts: {mount path: set of keys (a Secret's) or None (any file)}."""
        for name, value in values.items():
            if not value.startswith("/") or value in SHIPPED:
                continue
            under = [m for m in mounts if value == m or value.startswith(m.rstrip("/") + "/")]
            if not under:
                self.fail(where, f"--{name}={value} is on no volume and not in the image")
                continue
            mount = max(under, key=len)
            keys = mounts[mount]
            if keys is not None and os.path.relpath(value, mount) not in keys:
                self.fail(where, f"--{name}={value}: the volume at {mount} has no {os.path.relpath(value, mount)}")

    def check_own_port(self, where, image_port, values):
        if values.get("port") != image_port:
            self.fail(where, f"--port={values.get('port')} but the image's HEALTHCHECK probes {image_port} (images.txt)")

    def check_peers(self, where, values, ports_of):
        for name, value in values.items():
            if not name.endswith("_target"):
                continue
            m = re.fullmatch(r"([a-z0-9-]+):([0-9]+)", value)
            if not m:
                self.fail(where, f"--{name}={value} is not <service>:<port>")
            elif ports_of.get(m.group(1)) != m.group(2):
                self.fail(where, f"--{name}={value}: {m.group(1)} listens on {ports_of.get(m.group(1))}")

    # ------------------------------------------------------------------ Kubernetes

    def check_k8s(self, objects):
        by_kind = {}
        for o in objects:
            by_kind.setdefault(o.get("kind"), {})[o["metadata"]["name"]] = o
        secrets = {n: set((s.get("data") or {}).keys()) | set((s.get("stringData") or {}).keys())
                   for n, s in by_kind.get("Secret", {}).items()}
        claims = set(by_kind.get("PersistentVolumeClaim", {}))
        for secret, keys in secrets.items():
            m = TOKEN_SECRET.fullmatch(secret)
            if m and m.group(1) == SHARED:
                self.fail("k8s-secrets", f"Secret {secret}: one token shared by every service (ADR 0014: each its own)")
            elif m and keys != {f"{m.group(1)}.token"}:
                self.fail("k8s-secrets", f"Secret {secret} holds {sorted(keys)}, want only {m.group(1)}.token")
        service_ports = {}
        for name, svc in by_kind.get("Service", {}).items():
            grpc = [p for p in svc["spec"]["ports"] if p.get("name") in ("grpc", "postgres")]
            service_ports[name] = str(grpc[0]["port"]) if grpc else None
        workloads = list(by_kind.get("Deployment", {}).values()) + list(by_kind.get("StatefulSet", {}).values())
        if not workloads:
            self.fail("k8s", "no Deployment or StatefulSet")
        for w in workloads:
            self.check_workload(w, secrets, claims, service_ports, by_kind.get("Service", {}))
        self.check_policies(workloads, list(by_kind.get("NetworkPolicy", {}).values()))

    def app(self, w):
        return w["spec"]["template"]["metadata"].get("labels", {}).get("app.kubernetes.io/name")

    def check_policies(self, workloads, policies):
        """PostgreSQL only from the audit and grant-store pods; replicated envelopes from each
        other; ingress denied by default."""
        apps = {self.app(w): w for w in workloads}
        def selects(policy, app):
            match = policy["spec"].get("podSelector", {}).get("matchLabels", {})
            return match.get("app.kubernetes.io/name") == app
        def from_apps(entry):
            sel = entry.get("podSelector")
            if sel is None or set(entry) != {"podSelector"}:
                return None  # a namespace or an address range: not only pods of this namespace
            if "matchLabels" in sel:
                return {sel["matchLabels"].get("app.kubernetes.io/name")}
            names = set()
            for e in sel.get("matchExpressions", []):
                if e.get("key") == "app.kubernetes.io/name" and e.get("operator") == "In":
                    names |= set(e.get("values", []))
            return names
        if not any(p["spec"].get("podSelector") == {} and not p["spec"].get("ingress") for p in policies):
            self.fail("networkpolicy", "no default-deny ingress policy")
        if "postgres" in apps:
            mine = [p for p in policies if selects(p, "postgres")]
            if not mine:
                self.fail("networkpolicy", "no policy lets audit and grantstore reach postgres")
            for p in mine:
                for rule in p["spec"].get("ingress", []):
                    for entry in rule.get("from", [{}]):
                        names = from_apps(entry)
                        if names is None or not names <= {"audit", "grantstore"}:
                            self.fail(f"networkpolicy {p['metadata']['name']}", f"postgres reachable from {entry}: only audit and grantstore may")
        envelope = apps.get("envelope")
        if envelope is not None and envelope["spec"].get("replicas", 1) > 1:
            ok = any(selects(p, "envelope") and
                     {50051, 50055} <= {port.get("port") for port in r.get("ports", [])} and
                     any("envelope" in (from_apps(e) or set()) for e in r.get("from", []))
                     for p in policies for r in p["spec"].get("ingress", []))
            if not ok:
                self.fail("networkpolicy", "the envelope replicas cannot reach each other (forwarding, ADR 0011)")

    def env_of(self, c):
        env = {}
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = str(e["value"])
            elif "secretKeyRef" in e.get("valueFrom", {}):
                ref = e["valueFrom"]["secretKeyRef"]
                env[e["name"]] = ("secret", ref.get("name"), ref.get("key"))
            elif "fieldRef" in e.get("valueFrom", {}):
                env[e["name"]] = ("field", e["valueFrom"]["fieldRef"].get("fieldPath"))
        return env

    def check_workload(self, w, secrets, claims, service_ports, services):
        name = w["metadata"]["name"]
        spec = w["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        templates = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
        if w["kind"] == "Deployment" and w["spec"].get("replicas", 1) < 2:
            self.fail(f"{w['__file']}: {name}", "a stateless Deployment runs fewer than 2 replicas")
        if w["kind"] == "StatefulSet" and not templates:
            self.fail(f"{w['__file']}: {name}", "a StatefulSet without a volume claim for its database")
        for v in volumes.values():
            if "secret" in v and v["secret"]["secretName"] not in secrets:
                self.fail(f"{w['__file']}: {name}", f"Secret {v['secret']['secretName']} is made by no one (k8s-secrets.sh)")
            if "persistentVolumeClaim" in v and v["persistentVolumeClaim"]["claimName"] not in claims:
                self.fail(f"{w['__file']}: {name}", f"claim {v['persistentVolumeClaim']['claimName']} is not declared")
        for c in spec["containers"]:
            where = f"{w['__file']}: {name}/{c['name']}"
            binary, image_port = self.image_of(where, c.get("image"))
            if binary is None:
                continue
            env = self.env_of(c)
            if binary == "-":
                values, port, port_name = {}, image_port, "postgres"
            else:
                values = self.check_flags(where, binary, c.get("args", []))
                port, port_name = values.get("port"), "grpc"
                self.check_own_port(where, image_port, values)
            named = {p.get("name"): str(p["containerPort"]) for p in c.get("ports", [])}
            if named.get(port_name) != port:
                self.fail(where, f"containerPort {port_name} {named.get(port_name)} is not the port {port} it listens on")
            if "mcp_port" in values and named.get("mcp") != values["mcp_port"]:
                self.fail(where, f"containerPort mcp {named.get('mcp')} is not --mcp_port {values['mcp_port']}")
            if "console_port" in values and named.get("https") != values["console_port"]:
                self.fail(where, f"containerPort https {named.get('https')} is not --console_port {values['console_port']}")
            svc = services.get(name)
            if svc is None:
                self.fail(where, f"no Service {name}")
            else:
                for p in svc["spec"]["ports"]:
                    if str(named.get(p.get("targetPort"), p.get("targetPort"))) != str(p["port"]):
                        self.fail(where, f"Service port {p['port']} targets {p.get('targetPort')}, which is {named.get(p.get('targetPort'))}")
                selector = svc["spec"].get("selector", {})
                labels = w["spec"]["template"]["metadata"].get("labels", {})
                if not selector or any(labels.get(k) != v for k, v in selector.items()):
                    self.fail(where, f"Service {name} does not select the pods")
            for kind in ("readinessProbe", "livenessProbe"):
                probe = c.get(kind)
                if probe is None or "exec" not in probe:
                    self.fail(where, f"no exec {kind}")
                elif binary == "-":
                    if probe["exec"].get("command") != POSTGRES_PROBE:
                        self.fail(f"{where} {kind}", f"the PostgreSQL image's probe is {POSTGRES_PROBE}")
                else:
                    self.check_probe(f"{where} {kind}", probe["exec"].get("command"), port)
            if binary != "-" and "--mode=live" not in (c.get("livenessProbe") or {}).get("exec", {}).get("command", []):
                self.fail(where, "the liveness probe must pass while a dependency is down (--mode=live)")
            if not (c.get("resources") or {}).get("requests"):
                self.fail(where, "no resource requests")
            mounts, token_mounts = {}, {}
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes and m["name"] not in templates:
                    self.fail(where, f"volumeMount {m['name']} is not a volume of the pod")
                    continue
                v = volumes.get(m["name"], {})
                mounts[m["mountPath"]] = secrets.get(v["secret"]["secretName"]) if "secret" in v else None
                sources = [v["secret"].get("secretName")] if "secret" in v else []
                sources += [p["secret"].get("name") for p in (v.get("projected") or {}).get("sources", []) if "secret" in p]
                holders = [t.group(1) for t in (TOKEN_SECRET.fullmatch(x or "") for x in sources) if t]
                if holders:  # another service's token, if any, is the one to report
                    foreign = [h for h in holders if h != SERVICES.get(binary)]
                    token_mounts[m["mountPath"]] = (foreign or holders)[0]
            refs = [e[1] for e in env.values() if isinstance(e, tuple) and e[0] == "secret"]
            refs += [(e.get("secretRef") or {}).get("name") for e in c.get("envFrom", [])]
            for ref in refs:
                t = TOKEN_SECRET.fullmatch(ref or "")
                if t:
                    self.fail(where, f"takes the token Secret {ref} as environment: tokens are files of the service's own Secret")
            if binary in SERVICES:
                self.check_own_token(where, SERVICES[binary], values, token_mounts)
            elif token_mounts:
                self.fail(where, f"mounts service tokens at {sorted(token_mounts)}: only each service its own")
            if binary == "-":
                self.check_postgres(where, c.get("args", []) + c.get("command", []), env, mounts)
                continue
            self.check_paths(where, values, mounts)
            self.check_checkpoint_key(where, binary, values)
            self.check_console_origin(where, binary, values)
            self.check_peers(where, values, service_ports)
            self.check_db(where, values, env, mounts, service_ports, secrets)
            if binary == ENVELOPE and w["spec"].get("replicas", 1) > 1:
                self.check_k8s_replicas(where, w, c, values, env, services)

    def check_k8s_replicas(self, where, w, c, values, env, services):
        """A replicated envelope: a StatefulSet (stable pod names) naming itself $(POD_NAME), its
        pods reached through its headless Service at <pod>.<service>.<namespace>.svc."""
        name, count = w["metadata"]["name"], w["spec"].get("replicas", 1)
        if w["kind"] != "StatefulSet":
            self.fail(where, f"{count} envelope replicas in a {w['kind']}: their names are not stable, so a turn's calls cannot reach its owner (ADR 0011); use a StatefulSet")
            return
        if values.get("replica_name") != "$(POD_NAME)" or env.get("POD_NAME") != ("field", "metadata.name"):
            self.fail(where, "--replica_name must be $(POD_NAME), the env POD_NAME from metadata.name")
        headless = services.get(w["spec"].get("serviceName"))
        if headless is None or headless["spec"].get("clusterIP") != "None":
            self.fail(where, f"serviceName {w['spec'].get('serviceName')} is not a headless Service")
            return
        namespace = w["metadata"].get("namespace", "default")
        pods = [f"{name}-{i}" for i in range(count)]
        def expected(pod):
            if pod not in pods:
                return None
            host = f"{pod}.{headless['metadata']['name']}.{namespace}.svc"
            hosts = [host, host + ".cluster.local"]
            return ([f"{h}:{values.get('port')}" for h in hosts],
                    [f"https://{h}:{values.get('mcp_port')}/mcp" for h in hosts])
        # Every pod runs the same arguments: the replicas are the pods' names.
        replicas = [(f"{where} (pod {p})", dict(values, replica_name=p)) for p in pods]
        self.check_replicas(where, replicas, expected)

    # ------------------------------------------------------------------ compose

    def resolve(self, text):
        dirs = {"SHAREDOS_CERTS_DIR": self.certs, "SHAREDOS_SECRETS_DIR": self.secrets}
        def sub(m):
            return dirs.get(m.group(1), m.group(2))
        return re.sub(r"\$\{([A-Z_]+):-([^}]*)\}", sub, text)

    def check_compose(self, path):
        with open(path) as f:
            compose = yaml.safe_load(f)
        services = compose["services"]
        declared = set((compose.get("volumes") or {}).keys())
        file = os.path.basename(path)
        ports_of, groups = {}, {}
        for name, s in services.items():
            values, _ = flag_values(s.get("command", []))
            m = re.fullmatch(r"localhost/([a-z0-9-]+):dev", s.get("image") or "")
            is_postgres = m is not None and self.images.get(m.group(1), ("", ""))[0] == "-"
            ports_of[name] = self.postgres_port if is_postgres else values.get("port")
            # Replicas <group>-<n> are reached together under the alias <group> (compose.sh).
            g = re.fullmatch(r"([a-z]+)-[0-9]+", name)
            if g:
                groups.setdefault(g.group(1), set()).add(ports_of[name])
        for group, ports in groups.items():
            if group not in ports_of:
                ports_of[group] = ports.pop() if len(ports) == 1 else None
        envelopes, data_volumes = [], {}
        for name, s in services.items():
            where = f"{file}: {name}"
            binary, image_port = self.image_of(where, s.get("image"))
            if binary is None:
                continue
            env = dict(str(e).split("=", 1) for e in s.get("environment", []) if "=" in str(e))
            if binary == "-":
                values = {}
            else:
                values = self.check_flags(where, binary, s.get("command", []))
                self.check_own_port(where, image_port, values)
            published = set()
            for p in s.get("ports", []):
                m = re.fullmatch(r"127\.0\.0\.1:\$\{[A-Z][A-Z0-9_]*:-[0-9]+\}:([0-9]+)", str(p))
                if not m:
                    self.fail(where, f"port {p!r} is not published on loopback as 127.0.0.1:${{VAR:-N}}:N")
                    continue
                published.add(m.group(1))
            if published - {values.get("port"), values.get("mcp_port"), values.get("console_port")}:
                self.fail(where, f"publishes {sorted(published)} but listens on {values.get('port')}")
            mounts, token_mounts = {}, {}
            for v in s.get("volumes", []):
                source, target = self.resolve(v).split(":")[:2]
                t = TOKEN_DIR.fullmatch(os.path.basename(source.rstrip("/")))
                if "/" in source and t:
                    token_mounts[target] = t.group(1)
                if "/" not in source:
                    if source not in declared:
                        self.fail(where, f"volume {source} is not declared")
                    mounts[target] = None
                    if target == "/var/lib/sharedos":
                        other = data_volumes.setdefault(source, name)
                        if other != name:
                            self.fail(where, f"shares its data volume {source} with {other}: outboxes and turn journals are a replica's own")
                    continue
                directory = source
                if not os.path.isdir(directory):
                    self.fail(where, f"bind mount {source} is not a directory gen-certs.sh or gen-secrets.sh makes")
                    continue
                mounts[target] = set(os.listdir(directory))
            for dep in s.get("depends_on", []):
                if dep not in services:
                    self.fail(where, f"depends_on {dep}, which is not a service")
            if binary in SERVICES:
                self.check_own_token(where, SERVICES[binary], values, token_mounts)
            elif token_mounts:
                self.fail(where, f"mounts service tokens at {sorted(token_mounts)}: only each service its own")
            if binary == "-":
                self.check_postgres(where, s.get("command", []) + s.get("entrypoint", []), env, mounts)
                continue
            self.check_paths(where, values, mounts)
            self.check_checkpoint_key(where, binary, values)
            self.check_console_origin(where, binary, values)
            self.check_peers(where, values, ports_of)
            self.check_db(where, values, env, mounts, ports_of)
            if binary == ENVELOPE:
                envelopes.append((where, name, values))
        if len(envelopes) > 1:
            by_name = {values.get("replica_name"): (service, values) for _, service, values in envelopes}
            def expected(replica):
                if replica not in by_name:
                    return None
                service, values = by_name[replica]
                return ([f"{service}:{values.get('port')}"], [f"https://{service}:{values.get('mcp_port')}/mcp"])
            self.check_replicas(file, [(w, values) for w, _, values in envelopes], expected)


def broken(src, out):
    """Copies of the first Deployment, each broken once: a wrong type, a missing required field."""
    objects = json.load(open(src))
    base = next(o for o in objects if o["kind"] == "Deployment")
    copies = []
    b = copy.deepcopy(base); b["spec"]["replicas"] = "two"; copies.append(b)
    b = copy.deepcopy(base); del b["spec"]["template"]["spec"]["containers"][0]["name"]; copies.append(b)
    b = copy.deepcopy(base); del b["spec"]["selector"]; copies.append(b)
    b = copy.deepcopy(base); b["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "grpc"; copies.append(b)
    b = copy.deepcopy(base); b["spec"]["template"]["spec"]["containers"] = {"name": "x"}; copies.append(b)
    svc = copy.deepcopy(next(o for o in objects if o["kind"] == "Service"))
    del svc["spec"]["ports"][0]["port"]; copies.append(svc)
    json.dump(copies, open(out, "w"))


def main(argv):
    if argv[0] == "to_json":
        json.dump([clean(o) for o in load_yaml(argv[2:])], open(argv[1], "w"))
        return 0
    if argv[0] == "broken":
        broken(argv[1], argv[2])
        return 0
    opts, files = {}, []
    for a in argv[1:]:
        m = re.fullmatch(r"--([a-z_]+)=(.*)", a)
        if m:
            opts[m.group(1)] = m.group(2)
        else:
            files.append(a)
    checker = Checker(opts)
    checker.check_k8s(load_yaml(files))
    checker.check_compose(opts["compose"])
    if opts.get("compose_oidc"):
        checker.check_compose_oidc(opts["compose"], opts["compose_oidc"])
    checker.check_no_password(files + [opts["compose"]])
    checker.check_service_tokens()
    for p in checker.problems:
        print("FAIL: " + p)
    if not checker.problems:
        print(f"ok: {len(files)} manifest files and the compose file agree with the binaries")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
