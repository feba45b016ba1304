#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Stops k0s with the binary installed now (`k0s stop`: its controller or worker service), then puts
# each staged artifact in place: a copy next to the target, then an atomic rename over it; the
# previous binary is kept by the backup step. The airgap image bundle lands in /var/lib/k0s/images/,
# which k0s imports when it starts. The restart step runs `k0s start`. Safe to run again after a
# crash: a stopped k0s stays stopped and installed artifacts are reported as such.

staging_dir='/var/lib/inplace/staging'
bin_dir='/usr/local/bin'

k0s="$root$bin_dir/k0s"
if [ -x "$k0s" ] && "$k0s" status >/dev/null 2>&1; then
  # k0s's own output goes to stderr: stdout carries only the key=value report.
  "$k0s" stop >&2
  echo "stopped=k0s"
else
  echo "already_stopped=k0s"
fi

sha256_of() {
  local sum
  sum="$(sha256sum "$1")"
  echo "${sum%% *}"
}

# name staged_file_name sha256 install_path mode
install_artifact() {
  local target="$root$4"
  if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$3" ]; then
    echo "already_installed=$1"
    return 0
  fi
  local staged="$root$staging_dir/$2"
  if [ ! -f "$staged" ] || [ "$(sha256_of "$staged")" != "$3" ]; then
    echo "artifact $1: staged file $staging_dir/$2 is missing or does not have sha256 $3" >&2
    exit 1
  fi
  local dir
  dir="$(dirname "$target")"
  mkdir -p "$dir"
  local tmp="$dir/.$(basename "$target").inplace-tmp"
  cp "$staged" "$tmp"
  chmod "$5" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$3" ]; then
    rm -f "$tmp"
    echo "artifact $1: the copy next to $4 does not have sha256 $3" >&2
    exit 1
  fi
  mv -f "$tmp" "$target"
  echo "installed=$1"
}
install_artifact 'k0s' 'k0s.1111111111111111111111111111111111111111111111111111111111111111' '1111111111111111111111111111111111111111111111111111111111111111' '/usr/local/bin/k0s' '0755'
install_artifact 'k0s-airgap-bundle' 'k0s-airgap-bundle.2222222222222222222222222222222222222222222222222222222222222222' '2222222222222222222222222222222222222222222222222222222222222222' '/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0-amd64.tar' '0644'
