#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Puts each staged artifact in place: a copy next to the target, then an atomic rename over it.
# The staged file is kept, so running this again after a crash is safe. The running kubelet keeps
# its old binary until the restart step; kubeadm upgrade runs before that with the new kubeadm.
# Then imports every image archive into containerd's k8s.io namespace, so the upgrade needs no
# registry (air-gapped). ctr import is idempotent: a re-run imports again at no harm.

staging_dir={{staging_dir}}

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
install_artifact {{artifacts}}

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
import_images {{images}}
