#!/bin/bash
# inplace-step: backup
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
journal_script='backup'
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
# Keeps a copy of each current binary as <backup_dir>/<name>.prev, checked against the digest seen
# at preflight. A backup that already has that digest is kept as it is. Nothing here follows a link:
# the backup dir is root's alone with no link on the way, a binary or backup that is a link is
# refused, and each copy goes to a new file made by mktemp in the backup dir (never a fixed name
# someone could plant), whose digest is checked before it is renamed over the backup.

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
[ -d "$root$backup_dir" ] || mkdir -p "$root$backup_dir"
require_safe_dir "$backup_dir"

# path expected_sha256 prev current_sha256: the file does not have the digest, so only a kept backup
# that has it will do (backup_file skips it while it differs from the file); else the step fails.
refuse_unless_kept() {
  if [ -f "$3" ] && [ "$(sha256_of "$3")" = "$2" ]; then
    echo "already_backed_up=$1"
    return 0
  fi
  echo "cannot back up $1: it has sha256 $4, expected $2, and no backup has that digest" >&2
  exit 1
}

# path expected_sha256
# Reads each file as few times as its checks allow (issue 12): a kept backup that differs from the
# file (cmp stops at the first differing byte) is only hashed if the file itself turns out not to
# have the digest (cmp failing to tell counts as the same bytes), and the one digest computed on the
# way is the copy's: the bytes kept.
backup_file() {
  local name="${1##*/}"
  local prev="$root$backup_dir/$name.prev"
  if [ -L "$root$1" ] || [ -L "$prev" ]; then
    echo "refusing to back up $1: it or $backup_dir/$name.prev is a symbolic link" >&2
    exit 1
  fi
  local compared=1 # 0 the same bytes, 1 different (or either absent), more: cmp could not tell
  if [ -f "$prev" ] && [ -f "$root$1" ]; then
    compared=0
    cmp -s "$prev" "$root$1" || compared=$?
  fi
  if [ -f "$prev" ] && [ "$compared" -ne 1 ] && [ "$(sha256_of "$prev")" = "$2" ]; then
    echo "already_backed_up=$1"
    return 0
  fi
  if [ ! -f "$root$1" ]; then
    refuse_unless_kept "$1" "$2" "$prev" "absent"
    return 0
  fi
  local tmp
  tmp="$(mktemp "$root$backup_dir/.$name.prev.XXXXXXXX")"
  cp -p "$root$1" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$2" ]; then
    rm -f "$tmp"
    local current
    current="$(sha256_of "$root$1")"
    if [ "$current" = "$2" ]; then
      echo "cannot back up $1: the copy does not have sha256 $2" >&2
      exit 1
    fi
    refuse_unless_kept "$1" "$2" "$prev" "$current"
    return 0
  fi
  mv -f "$tmp" "$prev"
  echo "backed_up=$1"
}

backup_file '/usr/bin/kubeadm' '5555555555555555555555555555555555555555555555555555555555555555'
backup_file '/usr/bin/kubelet' '6666666666666666666666666666666666666666666666666666666666666666'
backup_file '/usr/bin/kubectl' '7777777777777777777777777777777777777777777777777777777777777777'
