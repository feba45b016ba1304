#!/bin/bash
# inplace-step: stage
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
journal_script='stage-prepare'
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
# Creates the staging dir and reports which artifacts need no upload: already staged or already
# installed with the right digest. A staged file with a wrong digest is removed. For the others, a
# partial upload left by an interrupted attempt is reported with its size and digest, so the worker
# can resume it once its own copy's prefix has the same digest.

staging_dir='/var/lib/inplace/staging'

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

# Every directory on the way is root's alone and none is a link, so the one chown below is of the
# staging dir itself, never of a directory someone else chose or swapped in.
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
[ -d "$root$staging_dir" ] || mkdir -p "$root$staging_dir"
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
# The upload runs over SFTP as the login user, who must be able to write here.
if [ -n "${SUDO_USER:-}" ]; then
  chown "$SUDO_USER" "$root$staging_dir"
fi

# path size: whether the file may be that size (0: the release does not say, so it may); a file of
# another size cannot have the artifact's digest and is not read (issue 12).
may_be_size() {
  [ "$2" -eq 0 ] || [ "$(stat -c %s "$1")" -eq "$2" ]
}

# name staged_file_name sha256 install_path size_bytes
check_artifact() {
  local staged="$root$staging_dir/$2"
  if [ -f "$staged" ]; then
    if may_be_size "$staged" "$5" && [ "$(sha256_of "$staged")" = "$3" ]; then
      echo "staged=$1"
      return 0
    fi
    rm -f "$staged"
  fi
  if [ -f "$root$4" ] && may_be_size "$root$4" "$5" && [ "$(sha256_of "$root$4")" = "$3" ]; then
    echo "installed=$1"
    return 0
  fi
  local part="$root$staging_dir/.$2.part"
  if [ -f "$part" ]; then
    echo "partial=$1 $(stat -c %s "$part") $(sha256_of "$part")"
  fi
}
check_artifact 'os-image' 'os-image.5555555555555555555555555555555555555555555555555555555555555555' '5555555555555555555555555555555555555555555555555555555555555555' '/run/initramfs/cos-state/cOS/active.img' '1500000000'
