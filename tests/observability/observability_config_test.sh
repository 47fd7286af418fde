#!/usr/bin/env bash
# deploy/observability: the alert rules pass `promtool check rules`; the Grafana dashboard is
# valid JSON with panels and queries; and every sharedos_* metric either file names is one
# common/metrics or the RPC interceptor defines (a renamed metric breaks this test, not a
# dashboard in production).
set -euo pipefail
root="$TEST_SRCDIR/sharedos"
rules="$root/deploy/observability/alerts.yml"
dashboard="$root/deploy/observability/dashboard.json"

promtool check rules "$rules"

python3 - "$dashboard" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d.get("title") and d.get("uid"), "dashboard: title and uid required"
panels = d.get("panels") or []
assert len(panels) >= 10, f"dashboard: {len(panels)} panels"
for p in panels:
    assert p.get("targets"), f"panel {p.get('title')}: no queries"
    for t in p["targets"]:
        assert "sharedos_" in t.get("expr", ""), f"panel {p.get('title')}: query without a metric"
print(f"dashboard: {len(panels)} panels")
PY

defined="$(cat "$root/common/metrics/sinks.cc" "$root/common/server/rpc_metrics.cc" |
  grep -o '"sharedos_[a-z_]*"' | tr -d '"' | sort -u)"
missing=0
for name in $(grep -oh 'sharedos_[a-z_]*' "$rules" "$dashboard" | sort -u); do
  base="$(echo "$name" | sed -E 's/_(bucket|count|sum)$//')"
  if ! grep -qx "$base" <<< "$defined"; then
    echo "FAIL: $name is used but no component defines $base"; missing=$((missing + 1))
  fi
done
[ "$missing" -eq 0 ] || exit 1
echo "ok"
