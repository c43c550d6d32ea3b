#!/usr/bin/env bash
# Starts / stops a 3-member orch cluster on loopback (docs/raft.md "Running a cluster").
#   deploy/cluster.sh up       start m1, m2, m3; write deploy/.cluster/kubeconfig (contexts m1, m2, m3)
#   deploy/cluster.sh status   one line per member: role, leader, term, commit and applied index
#                              (`status --json`: each member's whole /raftz document)
#   deploy/cluster.sh down     stop the members (data kept; `down --purge` removes it)
# Ports: API 6443/6444/6445, peers 2380/2381/2382 (override with ORCH_API_BASE / ORCH_PEER_BASE);
# state in deploy/.cluster (override with ORCH_CLUSTER_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ORCH_CLUSTER_DIR:-deploy/.cluster}
API_BASE=${ORCH_API_BASE:-6443}
PEER_BASE=${ORCH_PEER_BASE:-2380}
NAMES=(m1 m2 m3)
ORCH=(node --import tsx src/cli/main.ts)

initial_cluster() {
  local out="" i=0
  for n in "${NAMES[@]}"; do out+="${out:+,}$n=127.0.0.1:$((PEER_BASE + i))"; i=$((i + 1)); done
  echo "$out"
}

kubeconfig() {
  local ca token
  ca=$(base64 -w0 < "$ROOT/pki/ca.crt")
  # the admin bearer token (not the admin certificate) so that `kubectl --token=…` can act as another user
  token=$(cat "$ROOT/pki/admin.token")
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "current-context: m1"
    echo "clusters:"
    local i=0
    for n in "${NAMES[@]}"; do
      echo "- name: $n"
      echo "  cluster:"
      echo "    server: https://127.0.0.1:$((API_BASE + i))"
      echo "    certificate-authority-data: $ca"
      i=$((i + 1))
    done
    echo "users:"
    echo "- name: admin"
    echo "  user:"
    echo "    token: $token"
    echo "contexts:"
    for n in "${NAMES[@]}"; do
      echo "- name: $n"
      echo "  context: {cluster: $n, user: admin}"
    done
  } > "$ROOT/kubeconfig"
  chmod 600 "$ROOT/kubeconfig"
}

raftz() {
  local port=$1
  curl -sk --connect-timeout 2 --max-time 5 --cacert "$ROOT/pki/ca.crt" --cert "$ROOT/pki/admin.crt" --key "$ROOT/pki/admin.key" "https://127.0.0.1:$port/raftz"
}

up() {
  mkdir -p "$ROOT"
  node --import tsx deploy/init-pki.ts "$ROOT/pki" >/dev/null
  local ic i=0
  ic=$(initial_cluster)
  for n in "${NAMES[@]}"; do
    if [ -f "$ROOT/$n.pid" ] && kill -0 "$(cat "$ROOT/$n.pid")" 2>/dev/null; then
      echo "$n already running (pid $(cat "$ROOT/$n.pid"))"
    else
      # every member gets a copy of the shared PKI in <data-dir>/pki
      mkdir -p "$ROOT/$n"
      [ -d "$ROOT/$n/pki" ] || cp -r "$ROOT/pki" "$ROOT/$n/pki"
      "${ORCH[@]}" server --name "$n" --initial-cluster "$ic" \
        --data-dir "$ROOT/$n" \
        --secure-port $((API_BASE + i)) --peer-port $((PEER_BASE + i)) \
        "${EXTRA_FLAGS[@]}" \
        >"$ROOT/$n.log" 2>&1 &
      echo $! > "$ROOT/$n.pid"
      echo "$n started (pid $!, https://127.0.0.1:$((API_BASE + i)), peer 127.0.0.1:$((PEER_BASE + i)), log $ROOT/$n.log)"
    fi
    i=$((i + 1))
  done
  kubeconfig
  # wait until every member serves its API (each waits for a quorum first)
  for attempt in $(seq 1 120); do
    local ok=0 dead=0
    # a member that exited (a flag it refuses, a port in use, data of another --api-domain) will not come up: say why now
    for n in "${NAMES[@]}"; do
      if ! kill -0 "$(cat "$ROOT/$n.pid")" 2>/dev/null; then
        echo "$n exited: $(grep -m1 'cannot start' "$ROOT/$n.log" || tail -n1 "$ROOT/$n.log")" >&2
        dead=1
      fi
    done
    if [ "$dead" -eq 1 ]; then
      echo "cluster did not come up; see $ROOT/*.log (\`$0 down\` stops the members still running)" >&2
      return 1
    fi
    for j in 0 1 2; do
      # /raftz answers curl pretty-printed (as kube-apiserver does for curl): `"leader": "m2"`
      if raftz $((API_BASE + j)) 2>/dev/null | grep -Eq '"leader": ?"m'; then ok=$((ok + 1)); fi
    done
    if [ "$ok" -eq 3 ]; then
      echo "cluster is up; kubeconfig: $ROOT/kubeconfig (contexts m1, m2, m3)"
      echo "  try: kubectl --kubeconfig $ROOT/kubeconfig --context m2 get namespaces"
      return 0
    fi
    sleep 0.5
  done
  echo "cluster did not become ready; see $ROOT/*.log" >&2
  return 1
}

down() {
  for n in "${NAMES[@]}"; do
    if [ -f "$ROOT/$n.pid" ]; then
      local pid
      pid=$(cat "$ROOT/$n.pid")
      if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
        echo "$n stopped"
      fi
      rm -f "$ROOT/$n.pid"
    fi
  done
  if [ "${1:-}" = "--purge" ]; then rm -rf "$ROOT"; echo "data removed"; fi
}

status() {
  local i=0 doc
  [ "${1:-}" = "--json" ] || printf '%-6s %-10s %-7s %-6s %-8s %s\n' NAME ROLE LEADER TERM COMMIT APPLIED
  for n in "${NAMES[@]}"; do
    if ! doc=$(raftz $((API_BASE + i)) 2>/dev/null) || [ -z "$doc" ]; then
      if [ "${1:-}" = "--json" ]; then echo "$n: not reachable"; else printf '%-6s %s\n' "$n" 'not reachable'; fi
    elif [ "${1:-}" = "--json" ]; then
      echo "$n: $doc"
    else
      # the document's fields (src/store/raft-options.ts memberStatus)
      printf '%s' "$doc" | node -e '
        let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
          const d = JSON.parse(s);
          const row = [d.name, d.role, d.leader || "-", d.term, d.commit, d.applied];
          const widths = [6, 10, 7, 6, 8];
          console.log(row.map((v, k) => (k < widths.length ? String(v).padEnd(widths[k]) : String(v))).join(" "));
        });'
    fi
    i=$((i + 1))
  done
}

# `up -- <server flags>`: extra flags for every member (e.g. -- --api-domain k8s.io)
EXTRA_FLAGS=()
case "${1:-}" in
  up)
    shift
    [ "${1:-}" = "--" ] && shift
    EXTRA_FLAGS=("$@")
    up
    ;;
  down) shift; down "${1:-}" ;;
  status) shift; status "${1:-}" ;;
  *) echo "usage: $0 up [-- <server flags>]|down [--purge]|status [--json]" >&2; exit 2 ;;
esac
