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
# Read-only: prints key=value facts about the host for the preflight checks.

staging_dir='/var/lib/inplace/staging'
bin_dir='/usr/local/bin'
version_binary='k3s'
service='k3s'

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

machine="$(uname -m)"
case "$machine" in
  x86_64) echo "arch=amd64" ;;
  aarch64) echo "arch=arm64" ;;
  *) echo "arch=$machine" ;;
esac

# The staging dir may not exist yet: measure the filesystem it will be created on.
dir="$root$staging_dir"
while [ ! -d "$dir" ]; do
  dir="${dir%/*}"
  dir="${dir:-/}"
done
free="$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')"
echo "staging_free_bytes=$free"

report_file() {
  if [ -f "$root$1" ]; then
    echo "file=$1 $(sha256_of "$root$1")"
  else
    echo "file=$1 absent"
  fi
}
report_file '/usr/local/bin/k3s'
report_file '/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst'

# Prints what the version binary says about its version (hook: a distribution may ask differently).
version_output() {
  "$1" --version
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
