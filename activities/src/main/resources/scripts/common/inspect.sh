#!/bin/bash
# inplace-step: preflight
set -eu
root="${INPLACE_HOST_ROOT:-}"
# inplace-read-only
# Read-only: prints key=value facts about the host for the preflight checks. First it refuses a host
# whose profile directories are unsafe (a symbolic link on the way, or a directory root does not own
# alone), before any step uses them.

staging_dir={{staging_dir}}
backup_dir={{backup_dir}}
bin_dir={{bin_dir}}
version_binary={{version_binary}}
service={{service}}

# inplace-include: sha256
# inplace-include: safe-dir

require_safe_dir "$bin_dir"
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
require_safe_dir "$backup_dir"

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
report_file {{install_paths}}

# inplace-hook: version-output

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
