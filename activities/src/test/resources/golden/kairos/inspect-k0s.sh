#!/bin/bash
# inplace-step: preflight
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
# inplace-read-only
# Read-only: prints key=value facts about a Kairos host for the preflight checks. The OS image's
# digest is known only once this node booted an image inplace installed (the boot plan says done in
# the active entry); otherwise it is reported absent and the image is (re)installed.

staging_dir='/var/lib/inplace/staging'
backup_dir='/var/lib/inplace/backup'
bin_dir='/usr/local/bin'
version_binary='k0s'
service='k0sworker'

# The boot plan of a Kairos host: which image the next boot must come up in, from which boot, and
# how far it got (installing, pending, done, fell_back). Kept on the persistent /var/lib so a
# retried or resumed step reads what an earlier attempt did (docs/kairos.md).
kairos_dir="$root/var/lib/inplace/kairos"
plan_file="$kairos_dir/boot-plan"
boot_id() {
  tr -d '[:space:]' < "$root/proc/sys/kernel/random/boot_id"
}
plan_get() { # key
  if [ -f "$plan_file" ]; then
    awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$plan_file"
  fi
}
plan_write() { # sha256 entry status from_boot
  mkdir -p "$kairos_dir"
  printf 'sha256=%s\nentry=%s\nstatus=%s\nfrom_boot=%s\n' "$1" "$2" "$3" "$4" > "$plan_file.tmp"
  mv -f "$plan_file.tmp" "$plan_file"
}
booted_entry() {
  kairos-agent state get boot 2>/dev/null | tr -d '[:space:]"'
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

# The profile's directories: no symbolic link on the way, none another user owns or may write.
require_safe_dir "$bin_dir"
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
require_safe_dir "$backup_dir"

if ! command -v kairos-agent >/dev/null 2>&1; then
  echo "kairos-agent is not installed: this is not a Kairos host (check the cluster's os setting)" >&2
  exit 1
fi

machine="$(uname -m)"
case "$machine" in
  x86_64) echo "arch=amd64" ;;
  aarch64) echo "arch=arm64" ;;
  *) echo "arch=$machine" ;;
esac

# The staging dir may not exist yet: measure the filesystem it will be created on.
dir="$root$staging_dir"
while [ ! -d "$dir" ]; do
  dir="$(dirname "$dir")"
done
free="$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')"
echo "staging_free_bytes=$free"

booted="$(booted_entry)"
echo "booted_entry=$booted"
report_image() { # install_path
  if [ "$booted" = active_boot ] && [ "$(plan_get entry)" = active_boot ] && [ "$(plan_get status)" = done ]; then
    echo "file=$1 $(plan_get sha256)"
  else
    echo "file=$1 absent"
  fi
}
report_image '/run/initramfs/cos-state/cOS/active.img'

# k0s prints its release (v1.31.2+k0s.0) with `k0s version`.
version_output() {
  "$1" version
}

# First token of the first line that looks like v<major>.<minor>.<patch>; empty when unknown.
version=""
binary="$root$bin_dir/$version_binary"
if [ -L "$binary" ]; then
  echo "refusing $bin_dir/$version_binary: it is a symbolic link; only the file itself is run" >&2
  exit 1
fi
if [ -x "$binary" ]; then
  version="$( (version_output "$binary" 2>/dev/null || true) | awk 'NR == 1 {
    for (i = 1; i <= NF; i++) if ($i ~ /^v[0-9]+\.[0-9]+\.[0-9]+/) { print $i; exit }
  }')"
fi
echo "version=$version"

if systemctl is-active "$service" >/dev/null 2>&1; then
  echo "service_active=true"
else
  echo "service_active=false"
fi
