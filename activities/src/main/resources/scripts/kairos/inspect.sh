#!/bin/bash
# inplace-step: preflight
set -eu
root="${INPLACE_HOST_ROOT:-}"
# inplace-read-only
# Read-only: prints key=value facts about a Kairos host for the preflight checks. The OS image's
# digest is known only once this node booted an image inplace installed (the boot plan says done in
# the active entry); otherwise it is reported absent and the image is (re)installed.

staging_dir={{staging_dir}}
backup_dir={{backup_dir}}
bin_dir={{bin_dir}}
version_binary={{version_binary}}
service={{service}}

# inplace-include: kairos-plan
# inplace-include: safe-dir

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
report_image {{install_paths}}

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
