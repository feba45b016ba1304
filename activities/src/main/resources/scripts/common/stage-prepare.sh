#!/bin/bash
# inplace-step: stage
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Creates the staging dir and reports which artifacts need no upload: already staged or already
# installed with the right digest. A staged file with a wrong digest is removed. For the others, a
# partial upload left by an interrupted attempt is reported with its size and digest, so the worker
# can resume it once its own copy's prefix has the same digest.

staging_dir={{staging_dir}}

# inplace-include: sha256
# inplace-include: safe-dir

# Every directory on the way is root's alone and none is a link, so the one chown below is of the
# staging dir itself, never of a directory someone else chose or swapped in.
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
[ -d "$root$staging_dir" ] || mkdir -p "$root$staging_dir"
require_safe_dir "$staging_dir" "${SUDO_USER:-}"
# The upload runs over SFTP as the login user, who must be able to write here.
if [ -n "${SUDO_USER:-}" ]; then
  chown "$SUDO_USER" "$root$staging_dir"
fi

# path size: whether the file may be that size (0: the release does not say, so it may); a file of
# another size cannot have the artifact's digest and is not read (issue 12).
may_be_size() {
  [ "$2" -eq 0 ] || [ "$(stat -c %s "$1")" -eq "$2" ]
}

# name staged_file_name sha256 install_path size_bytes
check_artifact() {
  local staged="$root$staging_dir/$2"
  if [ -f "$staged" ]; then
    if may_be_size "$staged" "$5" && [ "$(sha256_of "$staged")" = "$3" ]; then
      echo "staged=$1"
      return 0
    fi
    rm -f "$staged"
  fi
  if [ -f "$root$4" ] && may_be_size "$root$4" "$5" && [ "$(sha256_of "$root$4")" = "$3" ]; then
    echo "installed=$1"
    return 0
  fi
  local part="$root$staging_dir/.$2.part"
  if [ -f "$part" ]; then
    echo "partial=$1 $(stat -c %s "$part") $(sha256_of "$part")"
  fi
}
check_artifact {{artifacts}}
