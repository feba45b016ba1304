#!/bin/bash
# inplace-step: stage
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Checks an uploaded .part file against its digest and renames it to its staged name.

staging_dir={{staging_dir}}

# inplace-include: sha256
# inplace-include: safe-dir

require_safe_dir "$staging_dir" "${SUDO_USER:-}"

# name staged_file_name sha256
commit_artifact() {
  local part="$root$staging_dir/.$2.part"
  local staged="$root$staging_dir/$2"
  if [ -f "$staged" ] && [ "$(sha256_of "$staged")" = "$3" ]; then
    rm -f "$part"
    echo "committed=$1"
    return 0
  fi
  if [ ! -f "$part" ]; then
    echo "artifact $1: uploaded file $staging_dir/.$2.part is missing" >&2
    exit 1
  fi
  local actual
  actual="$(sha256_of "$part")"
  if [ "$actual" != "$3" ]; then
    rm -f "$part"
    echo "artifact $1: uploaded file has sha256 $actual, expected $3" >&2
    exit 1
  fi
  mv -f "$part" "$staged"
  echo "committed=$1"
}
commit_artifact {{artifacts}}
