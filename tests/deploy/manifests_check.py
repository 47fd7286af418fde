#!/usr/bin/env python3
"""Checks deploy/k8s and deploy/compose against the binaries (//tests/deploy:manifests_test).

  manifests_check.py to_json OUT.json YAML...     the Kubernetes objects, for validate_k8s.js
  manifests_check.py broken IN.json OUT.json      copies of a Deployment, each broken once
  manifests_check.py check --images=F --flags_dir=D --probe=BIN --certs=D --secrets=D
                           --compose=F YAML...    the consistency checks below; exit 1 naming
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
"""
import copy
import json
import os
import re
import subprocess
import sys

import yaml

SHIPPED = {"/etc/sharedos/standard_tools.textproto"}
PROBE = "/usr/local/bin/health_probe"


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
        service_ports = {}
        for name, svc in by_kind.get("Service", {}).items():
            grpc = [p for p in svc["spec"]["ports"] if p.get("name") == "grpc"]
            service_ports[name] = str(grpc[0]["port"]) if grpc else None
        workloads = list(by_kind.get("Deployment", {}).values()) + list(by_kind.get("StatefulSet", {}).values())
        if not workloads:
            self.fail("k8s", "no Deployment or StatefulSet")
        for w in workloads:
            self.check_workload(w, secrets, claims, service_ports, by_kind.get("Service", {}))

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
            values = self.check_flags(where, binary, c.get("args", []))
            port = values.get("port")
            self.check_own_port(where, image_port, values)
            named = {p.get("name"): str(p["containerPort"]) for p in c.get("ports", [])}
            if named.get("grpc") != port:
                self.fail(where, f"containerPort grpc {named.get('grpc')} is not --port {port}")
            if "mcp_port" in values and named.get("mcp") != values["mcp_port"]:
                self.fail(where, f"containerPort mcp {named.get('mcp')} is not --mcp_port {values['mcp_port']}")
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
                else:
                    self.check_probe(f"{where} {kind}", probe["exec"].get("command"), port)
            if "--mode=live" not in (c.get("livenessProbe") or {}).get("exec", {}).get("command", []):
                self.fail(where, "the liveness probe must pass while a dependency is down (--mode=live)")
            if not (c.get("resources") or {}).get("requests"):
                self.fail(where, "no resource requests")
            mounts = {}
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes and m["name"] not in templates:
                    self.fail(where, f"volumeMount {m['name']} is not a volume of the pod")
                    continue
                v = volumes.get(m["name"], {})
                mounts[m["mountPath"]] = secrets.get(v["secret"]["secretName"]) if "secret" in v else None
            self.check_paths(where, values, mounts)
            self.check_peers(where, values, service_ports)

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
        ports_of = {}
        for name, s in services.items():
            values, _ = flag_values(s.get("command", []))
            ports_of[name] = values.get("port")
        for name, s in services.items():
            where = f"compose.yaml: {name}"
            binary, image_port = self.image_of(where, s.get("image"))
            if binary is None:
                continue
            values = self.check_flags(where, binary, s.get("command", []))
            self.check_own_port(where, image_port, values)
            published = set()
            for p in s.get("ports", []):
                m = re.fullmatch(r"127\.0\.0\.1:\$\{[A-Z_]+:-[0-9]+\}:([0-9]+)", str(p))
                if not m:
                    self.fail(where, f"port {p!r} is not published on loopback as 127.0.0.1:${{VAR:-N}}:N")
                    continue
                published.add(m.group(1))
            if published - {values.get("port"), values.get("mcp_port")}:
                self.fail(where, f"publishes {sorted(published)} but listens on {values.get('port')}")
            mounts = {}
            for v in s.get("volumes", []):
                source, target = self.resolve(v).split(":")[:2]
                if "/" not in source:
                    if source not in declared:
                        self.fail(where, f"volume {source} is not declared")
                    mounts[target] = None
                    continue
                directory = source
                if not os.path.isdir(directory):
                    self.fail(where, f"bind mount {source} is not a directory gen-certs.sh or gen-secrets.sh makes")
                    continue
                mounts[target] = set(os.listdir(directory))
            self.check_paths(where, values, mounts)
            self.check_peers(where, values, ports_of)
            for dep in s.get("depends_on", []):
                if dep not in services:
                    self.fail(where, f"depends_on {dep}, which is not a service")


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
    for p in checker.problems:
        print("FAIL: " + p)
    if not checker.problems:
        print(f"ok: {len(files)} manifest files and the compose file agree with the binaries")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
