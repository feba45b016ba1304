#!/bin/bash
# inplace-step: snapshot
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Takes an etcd snapshot <snapshot_dir>/<name>.db before anything changes, with the etcd static
# pod's own certificates: etcdctl on the host when there is one, else the etcd container's etcdctl
# through crictl exec (its data dir /var/lib/etcd is a hostPath). A snapshot of that name already
# there (a retry after a crash) is reported instead of taking another.

bin_dir={{bin_dir}}
snapshot_dir={{snapshot_dir}}
pki_dir={{pki_dir}}
endpoint={{endpoint}}
name={{name}}

# inplace-include: safe-dir

file="$snapshot_dir/$name.db"
if [ -s "$root$file" ]; then
  echo "snapshot=$file"
  echo "already_taken=true"
  exit 0
fi
mkdir -p "$root$snapshot_dir"
part="$root$snapshot_dir/.$name.db.part"
rm -f "$part"

etcdctl=""
require_safe_dir "$bin_dir"
if [ -x "$root$bin_dir/etcdctl" ] && [ ! -L "$root$bin_dir/etcdctl" ]; then
  etcdctl="$root$bin_dir/etcdctl"
elif command -v etcdctl >/dev/null 2>&1; then
  etcdctl="$(command -v etcdctl)"
fi

# The snapshot tool's own output goes to stderr: stdout carries only the key=value report.
if [ -n "$etcdctl" ]; then
  ETCDCTL_API=3 "$etcdctl" --endpoints="$endpoint" --cacert="$root$pki_dir/ca.crt" \
    --cert="$root$pki_dir/server.crt" --key="$root$pki_dir/server.key" snapshot save "$part" >&2
else
  if ! command -v crictl >/dev/null 2>&1; then
    echo "neither etcdctl nor crictl is on this host: cannot take the etcd snapshot" >&2
    exit 1
  fi
  container="$(crictl ps --name '^etcd$' --quiet | head -n 1)"
  if [ -z "$container" ]; then
    echo "no etcdctl on the host and no running etcd container to run it in" >&2
    exit 1
  fi
  in_pod="/var/lib/etcd/.$name.db.part"
  crictl exec "$container" etcdctl --endpoints="$endpoint" --cacert="$pki_dir/ca.crt" \
    --cert="$pki_dir/server.crt" --key="$pki_dir/server.key" snapshot save "$in_pod" >&2
  mv -f "$root$in_pod" "$part"
fi

if [ ! -s "$part" ]; then
  echo "etcdctl snapshot save succeeded but wrote no snapshot to $snapshot_dir" >&2
  exit 1
fi
mv -f "$part" "$root$file"
echo "snapshot=$file"
echo "already_taken=false"
