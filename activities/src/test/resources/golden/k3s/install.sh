#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Puts each staged artifact in place: a copy next to the target, then an atomic rename over it.
# The staged file is kept, so running this again after a crash is safe.

staging_dir='/var/lib/inplace/staging'

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
install_artifact 'k3s' 'k3s.1111111111111111111111111111111111111111111111111111111111111111' '1111111111111111111111111111111111111111111111111111111111111111' '/usr/local/bin/k3s' '0755'
install_artifact 'k3s-airgap-images' 'k3s-airgap-images.2222222222222222222222222222222222222222222222222222222222222222' '2222222222222222222222222222222222222222222222222222222222222222' '/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst' '0644'
