#!/bin/bash
# inplace-step: restore
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Compensation: puts every file back as it was before the run. A file that did not exist is removed;
# a changed file is replaced by a copy of its backup, made by mktemp next to it, whose digest is
# checked (the bytes about to be put in place, not the backup before the copy) before the atomic
# rename. Nothing here follows a link: the backup dir and each target's dir must be root's alone with
# no link on the way, and a backup that is a link is not used. Restores what it can, then fails if
# anything could not be restored.

backup_dir={{backup_dir}}

# inplace-include: sha256
# inplace-include: restart-state
# inplace-include: safe-dir

require_safe_dir "$backup_dir"

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
  local dir="${1%/*}" name="${1##*/}"
  dir="${dir:-/}"
  local prev="$root$backup_dir/$name.prev" problem
  if [ -L "$prev" ] || [ ! -f "$prev" ]; then
    echo "cannot restore $1: no backup with sha256 $2 in $backup_dir" >&2
    failed=1
    return 0
  fi
  if ! problem="$(safe_dir_problem "$dir")"; then
    echo "cannot restore $1: $problem" >&2
    failed=1
    return 0
  fi
  [ -d "$root$dir" ] || mkdir -p "$root$dir"
  local tmp
  tmp="$(mktemp "$root$dir/.$name.inplace-XXXXXXXX")"
  cp -p "$prev" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$2" ]; then
    rm -f "$tmp"
    echo "cannot restore $1: no backup with sha256 $2 in $backup_dir" >&2
    failed=1
    return 0
  fi
  mark_restart_pending
  journal "act action=restore path=$1 from=$current to=$2"
  mv -f "$tmp" "$root$1"
  echo "restored=$1"
}
restore_file {{files}}

if [ "$failed" -ne 0 ]; then
  exit 1
fi
