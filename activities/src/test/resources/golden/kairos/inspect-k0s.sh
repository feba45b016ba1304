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
