#!/bin/sh
# Installs Debian's etcd (server and etcdctl) for bench/watch-fanout.ts's
# side-by-side comparison, when `etcd` is not on PATH already. Needs root.
set -eu
if command -v etcd >/dev/null 2>&1; then
  echo "etcd already installed: $(command -v etcd)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/setup-etcd.sh: run as root (apt-get install etcd-server etcd-client)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends etcd-server etcd-client
# the Debian package starts a system etcd on 2379; the bench runs its own on other ports
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  systemctl stop etcd || true
fi
etcd --version
