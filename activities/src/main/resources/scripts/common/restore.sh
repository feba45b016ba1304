#!/bin/bash
# inplace-step: restore
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Compensation: puts every file back as it was before the run. A file that did not exist is removed;
# a changed file is replaced by its backup (checked against the old digest) with an atomic rename.
# Restores what it can, then fails if anything could not be restored.

backup_dir={{backup_dir}}

# inplace-include: sha256
# inplace-include: restart-state

failed=0

# path previous_sha256 (or "absent")
restore_file() {
  local target="$root$1"
  if [ "$2" = "absent" ]; then
    if [ -e "$target" ]; then
      mark_restart_pending
      journal "act action=restore path=$1 from=present to=absent"
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
  mark_restart_pending
  journal "act action=restore path=$1 from=$current to=$2"
  mv -f "$tmp" "$target"
  echo "restored=$1"
}
restore_file {{files}}

if [ "$failed" -ne 0 ]; then
  exit 1
fi
