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
if [ -x "$root$bin_dir/etcdctl" ]; then
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
