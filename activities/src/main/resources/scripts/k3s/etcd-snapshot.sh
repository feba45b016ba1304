#!/bin/bash
# inplace-step: snapshot
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Takes a snapshot of the server's datastore named <name> before anything changes, unless one of
# that name is already in the snapshot dir (a retry after a crash): then that one is reported.
# It observes which datastore the server runs: embedded etcd (db/etcd) gets `k3s etcd-snapshot
# save` (k3s names the file <name>-<node>-<unix time>, with a suffix when compressed); a single
# server on SQLite (db/state.db, no db/etcd) gets a copy of state.db with its -wal and -shm, taken
# while none of them changes (checked before and after), as <name>-<node>-<unix time>.sqlite.tar.

bin_dir={{bin_dir}}
binary={{binary}}
snapshot_dir={{snapshot_dir}}
name={{name}}
db_dir="${snapshot_dir%/*}"

# inplace-include: safe-dir

# Prints the host path of the newest snapshot file named <name>-..., or nothing.
find_snapshot() {
  local found="" f
  for f in "$root$snapshot_dir/$name"-*; do
    case "$f" in *.partial) continue ;; esac
    if [ -f "$f" ] && { [ -z "$found" ] || [ "$f" -nt "$found" ]; }; then
      found="$f"
    fi
  done
  if [ -n "$found" ]; then
    echo "${found#"$root"}"
  fi
}

# Size and nanosecond mtime of the SQLite files, or "absent": equal before and after a copy means
# no write and no checkpoint happened in between, so the copy is one consistent state.
sqlite_signature() {
  local f
  for f in state.db state.db-wal state.db-shm; do
    if [ -e "$root$db_dir/$f" ]; then
      stat -c "$f %s %y" "$root$db_dir/$f"
    else
      echo "$f absent"
    fi
  done
}

existing="$(find_snapshot)"
if [ -n "$existing" ]; then
  echo "snapshot=$existing"
  echo "already_taken=true"
  exit 0
fi

if [ ! -d "$root$db_dir/etcd" ] && [ -f "$root$db_dir/state.db" ]; then
  echo "datastore=sqlite"
  mkdir -p "$root$snapshot_dir"
  target="$root$snapshot_dir/$name-$(hostname)-$(date +%s).sqlite.tar"
  files=(state.db)
  for f in state.db-wal state.db-shm; do
    if [ -e "$root$db_dir/$f" ]; then
      files+=("$f")
    fi
  done
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    before="$(sqlite_signature)"
    tar -cf "$target.partial" -C "$root$db_dir" "${files[@]}"
    if [ "$before" = "$(sqlite_signature)" ]; then
      mv -f "$target.partial" "$target"
      echo "snapshot=${target#"$root"}"
      echo "already_taken=false"
      exit 0
    fi
    rm -f "$target.partial"
    sleep 0.5
  done
  echo "the SQLite datastore in $db_dir changed during each of 10 copies; no consistent snapshot was taken" >&2
  exit 1
fi

echo "datastore=etcd"
# The binary runs as root from the layout's bin dir only: no link on the way, the dir root's alone.
require_safe_dir "$bin_dir"
if [ -L "$root$bin_dir/$binary" ]; then
  echo "refusing $bin_dir/$binary: it is a symbolic link; only the file itself is run" >&2
  exit 1
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
