#!/bin/bash
# inplace-step: restore
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Compensation: puts every file back as it was before the run. A file that did not exist is removed;
# a changed file is replaced by its backup (checked against the old digest) with an atomic rename.
# Restores what it can, then fails if anything could not be restored.

backup_dir='/var/lib/inplace/backup'

sha256_of() {
  local sum
  sum="$(sha256sum "$1")"
  echo "${sum%% *}"
}

failed=0

# path previous_sha256 (or "absent")
restore_file() {
  local target="$root$1"
  if [ "$2" = "absent" ]; then
    if [ -e "$target" ]; then
      rm -f "$target"
      echo "removed=$1"
    else
      echo "unchanged=$1"
    fi
    return 0
  fi
  local current="absent"
  if [ -f "$target" ]; then
    current="$(sha256_of "$target")"
  fi
  if [ "$current" = "$2" ]; then
    echo "unchanged=$1"
    return 0
  fi
  local prev="$root$backup_dir/$(basename "$1").prev"
  if [ ! -f "$prev" ] || [ "$(sha256_of "$prev")" != "$2" ]; then
    echo "cannot restore $1: no backup with sha256 $2 in $backup_dir" >&2
    failed=1
    return 0
  fi
  local dir
  dir="$(dirname "$target")"
  mkdir -p "$dir"
  local tmp="$dir/.$(basename "$target").inplace-tmp"
  cp -p "$prev" "$tmp"
  mv -f "$tmp" "$target"
  echo "restored=$1"
}
restore_file '/usr/local/bin/k0s' '3333333333333333333333333333333333333333333333333333333333333333'
restore_file '/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0-amd64.tar' 'absent'

if [ "$failed" -ne 0 ]; then
  exit 1
fi
