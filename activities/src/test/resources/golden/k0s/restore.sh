#!/bin/bash
# inplace-step: restore
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
journal_script='restore'
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
# Compensation: puts every file back as it was before the run. A file that did not exist is removed;
# a changed file is replaced by a copy of its backup, made by mktemp next to it, whose digest is
# checked (the bytes about to be put in place, not the backup before the copy) before the atomic
# rename. Nothing here follows a link: the backup dir and each target's dir must be root's alone with
# no link on the way, and a backup that is a link is not used. Restores what it can, then fails if
# anything could not be restored.

backup_dir='/var/lib/inplace/backup'

# The sha256 of a file, in lower-case hex. OpenSSL's digest uses the CPU's SHA extensions where
# coreutils' sha256sum does not (4x faster on the project's machines, docs/benchmarks.md), and a node
# hashes each release several times; a host without openssl, or whose openssl answers anything but a
# digest, hashes with sha256sum as before.
sha256_of() {
  local sum=""
  if command -v openssl >/dev/null 2>&1; then
    sum="$(openssl dgst -sha256 -r "$1" 2>/dev/null)" || sum=""
    sum="${sum%% *}"
  fi
  if ! [[ "$sum" =~ ^[0-9a-f]{64}$ ]]; then
    sum="$(sha256sum "$1")"
    sum="${sum%% *}"
  fi
  echo "$sum"
}
# Restart bookkeeping on the host (docs/reliability.md, "Repeated destructive actions"): a swap or
# restore marks a restart pending; a restart that completed records it and clears the mark. A restart
# script then observes before it acts: nothing pending since this service's last completed restart
# means the service already runs the files in place (a retry whose answer was lost), so it does not
# restart again.
restart_state_dir="$root/var/lib/inplace"
mark_restart_pending() {
  { [ -d "$restart_state_dir" ] || mkdir -p "$restart_state_dir"; } && : > "$restart_state_dir/restart-pending"
}
restart_is_pending() {
  [ -e "$restart_state_dir/restart-pending" ] || [ ! -e "$restart_state_dir/restarted-$1" ]
}
restart_completed() {
  { [ -d "$restart_state_dir" ] || mkdir -p "$restart_state_dir"; } && : > "$restart_state_dir/restarted-$1" \
    && { [ ! -e "$restart_state_dir/restart-pending" ] || rm -f "$restart_state_dir/restart-pending"; }
}
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

require_safe_dir "$backup_dir"

failed=0

# path previous_sha256 (or "absent")
restore_file() {
  local target="$root$1"
  if [ "$2" = "absent" ]; then
    if [ -e "$target" ]; then
      mark_restart_pending
      journal "act action=restore path=$1 from=present to=absent"
      rm -f "$target"
      echo "removed=$1"
    else
      echo "unchanged=$1"
    fi
    return 0
  fi
  local current="absent"
  if [ -f "$target" ]; then
    current="$(sha256_of "$target")"
  fi
  if [ "$current" = "$2" ]; then
    echo "unchanged=$1"
    return 0
  fi
  local dir="${1%/*}" name="${1##*/}"
  dir="${dir:-/}"
  local prev="$root$backup_dir/$name.prev" problem
  if [ -L "$prev" ] || [ ! -f "$prev" ]; then
    echo "cannot restore $1: no backup with sha256 $2 in $backup_dir" >&2
    failed=1
    return 0
  fi
  if ! problem="$(safe_dir_problem "$dir")"; then
    echo "cannot restore $1: $problem" >&2
    failed=1
    return 0
  fi
  [ -d "$root$dir" ] || mkdir -p "$root$dir"
  local tmp
  tmp="$(mktemp "$root$dir/.$name.inplace-XXXXXXXX")"
  cp -p "$prev" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$2" ]; then
    rm -f "$tmp"
    echo "cannot restore $1: no backup with sha256 $2 in $backup_dir" >&2
    failed=1
    return 0
  fi
  mark_restart_pending
  journal "act action=restore path=$1 from=$current to=$2"
  mv -f "$tmp" "$root$1"
  echo "restored=$1"
}
restore_file '/usr/local/bin/k0s' '3333333333333333333333333333333333333333333333333333333333333333'
restore_file '/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0-amd64.tar' 'absent'

if [ "$failed" -ne 0 ]; then
  exit 1
fi
