#!/bin/bash
# inplace-step: backup
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Keeps a copy of each current binary as <backup_dir>/<name>.prev, checked against the digest seen
# at preflight. A backup that already has that digest is kept as it is. Nothing here follows a link:
# the backup dir is root's alone with no link on the way, a binary or backup that is a link is
# refused, and each copy goes to a new file made by mktemp in the backup dir (never a fixed name
# someone could plant), whose digest is checked before it is renamed over the backup.

backup_dir={{backup_dir}}

# inplace-include: sha256
# inplace-include: safe-dir

require_safe_dir "$backup_dir"
[ -d "$root$backup_dir" ] || mkdir -p "$root$backup_dir"
require_safe_dir "$backup_dir"

# path expected_sha256 prev current_sha256: the file does not have the digest, so only a kept backup
# that has it will do (backup_file skips it while it differs from the file); else the step fails.
refuse_unless_kept() {
  if [ -f "$3" ] && [ "$(sha256_of "$3")" = "$2" ]; then
    echo "already_backed_up=$1"
    return 0
  fi
  echo "cannot back up $1: it has sha256 $4, expected $2, and no backup has that digest" >&2
  exit 1
}

# path expected_sha256
# Reads each file as few times as its checks allow (issue 12): a kept backup that differs from the
# file (cmp stops at the first differing byte) is only hashed if the file itself turns out not to
# have the digest (cmp failing to tell counts as the same bytes), and the one digest computed on the
# way is the copy's: the bytes kept.
backup_file() {
  local name="${1##*/}"
  local prev="$root$backup_dir/$name.prev"
  if [ -L "$root$1" ] || [ -L "$prev" ]; then
    echo "refusing to back up $1: it or $backup_dir/$name.prev is a symbolic link" >&2
    exit 1
  fi
  local compared=1 # 0 the same bytes, 1 different (or either absent), more: cmp could not tell
  if [ -f "$prev" ] && [ -f "$root$1" ]; then
    compared=0
    cmp -s "$prev" "$root$1" || compared=$?
  fi
  if [ -f "$prev" ] && [ "$compared" -ne 1 ] && [ "$(sha256_of "$prev")" = "$2" ]; then
    echo "already_backed_up=$1"
    return 0
  fi
  if [ ! -f "$root$1" ]; then
    refuse_unless_kept "$1" "$2" "$prev" "absent"
    return 0
  fi
  local tmp
  tmp="$(mktemp "$root$backup_dir/.$name.prev.XXXXXXXX")"
  cp -p "$root$1" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$2" ]; then
    rm -f "$tmp"
    local current
    current="$(sha256_of "$root$1")"
    if [ "$current" = "$2" ]; then
      echo "cannot back up $1: the copy does not have sha256 $2" >&2
      exit 1
    fi
    refuse_unless_kept "$1" "$2" "$prev" "$current"
    return 0
  fi
  mv -f "$tmp" "$prev"
  echo "backed_up=$1"
}

backup_file {{files}}
