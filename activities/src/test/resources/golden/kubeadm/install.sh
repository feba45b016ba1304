#!/bin/bash
# inplace-step: install
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
journal_script='install'
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
# Puts each staged artifact in place: a copy next to the target, then an atomic rename over it.
# The staged file is kept, so running this again after a crash is safe. The running kubelet keeps
# its old binary until the restart step; kubeadm upgrade runs before that with the new kubeadm.
# Then imports every image archive into containerd's k8s.io namespace, so the upgrade needs no
# registry (air-gapped). ctr import is idempotent: a re-run imports again at no harm.

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
# name staged_file_name sha256 install_path mode
# Each artifact is read as few times as its checks allow (issue 12): a target that differs from the
# staged file (cmp stops at the first differing byte) is not hashed, the staged file is not hashed
# either, and the one digest computed is the copy's: the bytes about to be renamed into place. Names
# come from parameter expansion, not dirname/basename processes (a node runs many of these at once).
install_artifact() {
  local target="$root$4"
  local staged="$root$staging_dir/$2"
  if [ -L "$staged" ]; then
    echo "artifact $1: staged file $staging_dir/$2 is a symbolic link" >&2
    exit 1
  fi
  if [ ! -f "$staged" ]; then
    if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$3" ]; then
      echo "already_installed=$1"
      return 0
    fi
    echo "artifact $1: staged file $staging_dir/$2 is missing or does not have sha256 $3" >&2
    exit 1
  fi
  # The target's state before the swap, as the journal records it: "absent", "differs" (cmp found
  # a byte that is not the staged file's, so it is not sha256 $3 once the staged file's copy checks
  # out below) or its digest.
  local current="absent" compared=0
  if [ -f "$target" ]; then
    cmp -s "$target" "$staged" || compared=$?
    if [ "$compared" -eq 1 ]; then
      current="differs"
    else # the same bytes, or cmp could not tell (then the digest decides, as it would anyway)
      current="$(sha256_of "$target")"
      if [ "$current" = "$3" ]; then
        echo "already_installed=$1"
        return 0
      fi
    fi
  fi
  local dir="${4%/*}"
  dir="${dir:-/}"
  require_safe_dir "$dir"
  [ -d "$root$dir" ] || mkdir -p "$root$dir"
  # A new file no one else can have made or linked (mktemp), in a directory only root may write.
  local tmp
  tmp="$(mktemp "$root$dir/.${target##*/}.inplace-XXXXXXXX")"
  cp "$staged" "$tmp"
  chmod "$5" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$3" ]; then
    rm -f "$tmp"
    # The staged file went bad: "differs" proved nothing, so the target decides by its digest.
    if [ "$current" = "differs" ] && [ "$(sha256_of "$target")" = "$3" ]; then
      echo "already_installed=$1"
      return 0
    fi
    if [ "$(sha256_of "$staged")" != "$3" ]; then
      echo "artifact $1: staged file $staging_dir/$2 is missing or does not have sha256 $3" >&2
    else
      echo "artifact $1: the copy next to $4 does not have sha256 $3" >&2
    fi
    exit 1
  fi
  mark_restart_pending
  journal "act action=swap path=$4 from=$current to=$3"
  mv -f "$tmp" "$target"
  echo "installed=$1"
}
install_artifact 'kubeadm' 'kubeadm.1111111111111111111111111111111111111111111111111111111111111111' '1111111111111111111111111111111111111111111111111111111111111111' '/usr/bin/kubeadm' '0755'
install_artifact 'kubelet' 'kubelet.2222222222222222222222222222222222222222222222222222222222222222' '2222222222222222222222222222222222222222222222222222222222222222' '/usr/bin/kubelet' '0755'
install_artifact 'kubectl' 'kubectl.3333333333333333333333333333333333333333333333333333333333333333' '3333333333333333333333333333333333333333333333333333333333333333' '/usr/bin/kubectl' '0755'
install_artifact 'kubernetes-images' 'kubernetes-images.4444444444444444444444444444444444444444444444444444444444444444' '4444444444444444444444444444444444444444444444444444444444444444' '/var/lib/inplace/images/kubernetes-images-amd64-v1.31.2.tar' '0644'

# name archive_path
import_images() {
  if ! command -v ctr >/dev/null 2>&1; then
    echo "artifact $1: ctr (containerd) is not on the PATH, cannot import $2" >&2
    exit 1
  fi
  # ctr's progress output goes to stderr: stdout carries only the key=value report.
  ctr -n k8s.io images import "$root$2" >&2
  echo "imported=$1"
}
import_images 'kubernetes-images' '/var/lib/inplace/images/kubernetes-images-amd64-v1.31.2.tar'
