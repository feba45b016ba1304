#!/bin/bash
# inplace-step: stage
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Creates the staging dir and reports which artifacts need no upload: already staged or already
# installed with the right digest. A staged file with a wrong digest is removed. For the others, a
# partial upload left by an interrupted attempt is reported with its size and digest, so the worker
# can resume it once its own copy's prefix has the same digest.

staging_dir='/var/lib/inplace/staging'

sha256_of() {
  local sum
  sum="$(sha256sum "$1")"
  echo "${sum%% *}"
}

mkdir -p "$root$staging_dir"
# The upload runs over SFTP as the login user, who must be able to write here.
if [ -n "${SUDO_USER:-}" ]; then
  chown "$SUDO_USER" "$root$staging_dir"
fi

# name staged_file_name sha256 install_path
check_artifact() {
  local staged="$root$staging_dir/$2"
  if [ -f "$staged" ]; then
    if [ "$(sha256_of "$staged")" = "$3" ]; then
      echo "staged=$1"
      return 0
    fi
    rm -f "$staged"
  fi
  if [ -f "$root$4" ] && [ "$(sha256_of "$root$4")" = "$3" ]; then
    echo "installed=$1"
    return 0
  fi
  local part="$root$staging_dir/.$2.part"
  if [ -f "$part" ]; then
    echo "partial=$1 $(stat -c %s "$part") $(sha256_of "$part")"
  fi
}
check_artifact 'os-image' 'os-image.5555555555555555555555555555555555555555555555555555555555555555' '5555555555555555555555555555555555555555555555555555555555555555' '/run/initramfs/cos-state/cOS/active.img'
