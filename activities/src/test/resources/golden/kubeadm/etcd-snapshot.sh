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
# Takes an etcd snapshot <snapshot_dir>/<name>.db before anything changes, with the etcd static
# pod's own certificates: etcdctl on the host when there is one, else the etcd container's etcdctl
# through crictl exec (its data dir /var/lib/etcd is a hostPath). A snapshot of that name already
# there (a retry after a crash) is reported instead of taking another.

bin_dir='/usr/bin'
snapshot_dir='/var/lib/inplace/etcd-snapshots'
pki_dir='/etc/kubernetes/pki/etcd'
endpoint='https://127.0.0.1:2379'
name='inplace-pre-v1-31-2'

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
