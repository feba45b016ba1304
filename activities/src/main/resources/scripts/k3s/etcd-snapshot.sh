#!/bin/bash
# inplace-step: snapshot
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Takes an etcd snapshot named <name> before anything changes, unless a snapshot file of that name
# is already in the snapshot dir (a retry after a crash): then that one is reported. k3s names the
# file <name>-<node>-<unix time>, with a suffix when compressed.

bin_dir={{bin_dir}}
binary={{binary}}
snapshot_dir={{snapshot_dir}}
name={{name}}

# Prints the host path of the newest snapshot file named <name>-..., or nothing.
find_snapshot() {
  local found="" f
  for f in "$root$snapshot_dir/$name"-*; do
    if [ -f "$f" ] && { [ -z "$found" ] || [ "$f" -nt "$found" ]; }; then
      found="$f"
    fi
  done
  if [ -n "$found" ]; then
    echo "${found#"$root"}"
  fi
}

existing="$(find_snapshot)"
if [ -n "$existing" ]; then
  echo "snapshot=$existing"
  echo "already_taken=true"
  exit 0
fi

# The snapshot tool's own output goes to stderr: stdout carries only the key=value report.
"$root$bin_dir/$binary" etcd-snapshot save --name "$name" >&2

taken="$(find_snapshot)"
if [ -z "$taken" ]; then
  echo "$binary etcd-snapshot save succeeded but no file $name-* is in $snapshot_dir" >&2
  exit 1
fi
echo "snapshot=$taken"
echo "already_taken=false"
