#!/bin/bash
# inplace-step: snapshot
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Takes a k0s backup (etcd or kine data, certificates, manifests: `k0s backup`) into
# <snapshot_dir>/<name>/ before anything changes. k0s names the archive k0s_backup_<time>.tar.gz, so
# each snapshot name gets its own directory, filled under a .part name and renamed once complete. A
# backup already there (a retry after a crash) is reported instead of taking another.

bin_dir={{bin_dir}}
snapshot_dir={{snapshot_dir}}
name={{name}}

# inplace-include: safe-dir

# Prints the host path of the backup archive in directory $1, or nothing.
find_backup() {
  local f
  for f in "$1"/k0s_backup_*.tar.gz; do
    if [ -s "$f" ]; then
      echo "${f#"$root"}"
      return 0
    fi
  done
}

dir="$root$snapshot_dir/$name"
existing="$(find_backup "$dir")"
if [ -n "$existing" ]; then
  echo "snapshot=$existing"
  echo "already_taken=true"
  exit 0
fi
# k0s runs as root from the layout's bin dir only: no link on the way, the dir root's alone.
require_safe_dir "$bin_dir"
if [ -L "$root$bin_dir/k0s" ]; then
  echo "refusing $bin_dir/k0s: it is a symbolic link; only the file itself is run" >&2
  exit 1
fi
part="$root$snapshot_dir/.$name.part"
rm -rf "$part"
mkdir -p "$part"

# k0s's own output goes to stderr: stdout carries only the key=value report.
"$root$bin_dir/k0s" backup --save-path "$part" >&2

if [ -z "$(find_backup "$part")" ]; then
  echo "k0s backup succeeded but wrote no k0s_backup_*.tar.gz to $snapshot_dir" >&2
  exit 1
fi
rm -rf "$dir"
mv -f "$part" "$dir"
echo "snapshot=$(find_backup "$dir")"
echo "already_taken=false"
