#!/bin/bash
# inplace-step: snapshot
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Sign of life (docs/reliability.md, finding 8): while this script runs, a background loop writes a
# newline to stderr every 2 s, so the worker tells a slow script (still pulsing) from a hung one
# (silent: stopped, or its host or connection gone) and cuts only the hung one. The loop reads
# nothing and writes nothing else; its sleep holds no output pipe, so ending the loop never delays
# the script's end. The EXIT trap stops it (pulse_stop; any later EXIT trap must call it too).
pulse_loop() {
  while sleep 2 </dev/null >/dev/null 2>&1; do
    printf '\n' >&2 || return 0
  done
}
pulse_loop </dev/null >/dev/null &
pulse_pid=$!
pulse_stop() { kill "$pulse_pid" 2>/dev/null || true; }
trap pulse_stop EXIT
journal_script='etcd-snapshot'
# Journal (ground truth for audits, see docs/reliability.md): one line when this script begins, one
# when it ends (its exit status, or the signal that stopped it) and one before each destructive
# action, appended to $root/var/log/inplace/journal. Each line is one O_APPEND write, so concurrent
# scripts never interleave; a journal that cannot be written never fails the script and nothing goes
# to stdout. The worker sets INPLACE_JOURNAL_WORKFLOW, _RUN and _ATTEMPT in front of the script.
journal_file="$root/var/log/inplace/journal"
journal() {
  {
    [ -d "${journal_file%/*}" ] || mkdir -p "${journal_file%/*}"
    printf '%s\n' "ts=${EPOCHREALTIME:-$(date +%s)} pid=$$ script=$journal_script wf=${INPLACE_JOURNAL_WORKFLOW:-none} run=${INPLACE_JOURNAL_RUN:-none} attempt=${INPLACE_JOURNAL_ATTEMPT:-0} event=$*" >> "$journal_file"
  } 2>/dev/null || true
}
# A signal ends the script as before (it is raised again) once its end line is written.
journal_signal() {
  trap - EXIT "$1"
  pulse_stop
  journal "end signal=$1"
  kill -s "$1" $$
}
journal_exit() {
  pulse_stop
  journal "end exit=$1"
}
trap 'journal_exit $?' EXIT
trap 'journal_signal HUP' HUP
trap 'journal_signal INT' INT
trap 'journal_signal TERM' TERM
trap 'journal_signal PIPE' PIPE
journal begin
# Takes a snapshot of the server's datastore named <name> before anything changes, unless one of
# that name is already in the snapshot dir (a retry after a crash): then that one is reported.
# It observes which datastore the server runs: embedded etcd (db/etcd) gets `k3s etcd-snapshot
# save` (k3s names the file <name>-<node>-<unix time>, with a suffix when compressed); a single
# server on SQLite (db/state.db, no db/etcd) gets a copy of state.db with its -wal and -shm, taken
# while none of them changes (checked before and after), as <name>-<node>-<unix time>.sqlite.tar.

bin_dir='/usr/local/bin'
binary='k3s'
snapshot_dir='/var/lib/rancher/k3s/server/db/snapshots'
name='inplace-pre-v1.31.2+k3s1'
db_dir="${snapshot_dir%/*}"

# Directories a root script uses (issue 34, docs/security.md): from / down, a component is unsafe
# when it is a symbolic link, not a directory, owned by anyone but the user this script runs as (root
# on a host) or writable by others; whoever owns or may write a directory can swap what is in it.
# A component that does not exist yet is fine (its parent was checked; the caller creates it).
# safe_dir_problem path [user]: prints the problem and returns 1; user may also own the last
# component (the login user's staging dir, which SFTP writes into).
safe_dir_problem() {
  local rest="${1#/}" cur="$root" part owner mode self allowed=""
  self="$(id -u)"
  if [ -n "${2:-}" ]; then
    allowed="$(id -u "$2")"
  fi
  while [ -n "$rest" ]; do
    part="${rest%%/*}"
    if [ "$part" = "$rest" ]; then rest=""; else rest="${rest#*/}"; fi
    cur="$cur/$part"
    if [ -L "$cur" ]; then
      echo "${cur#"$root"} is a symbolic link"
      return 1
    fi
    [ -e "$cur" ] || return 0
    if [ ! -d "$cur" ]; then
      echo "${cur#"$root"} is not a directory"
      return 1
    fi
    read -r owner mode <<< "$(stat -c '%u %a' "$cur")"
    if [ "$owner" != "$self" ] && { [ -n "$rest" ] || [ "$owner" != "$allowed" ]; }; then
      echo "${cur#"$root"} is owned by uid $owner, not $self"
      return 1
    fi
    if (( (8#$mode & 8#002) != 0 )); then
      echo "${cur#"$root"} is writable by others (mode $mode)"
      return 1
    fi
  done
}
# require_safe_dir path [user]: as safe_dir_problem, but the script stops (exit 1) on a problem.
require_safe_dir() {
  local problem
  if ! problem="$(safe_dir_problem "$@")"; then
    echo "refusing $1: $problem" >&2
    exit 1
  fi
}

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
