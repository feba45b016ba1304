# name staged_file_name sha256 install_path mode
install_artifact() {
  local target="$root$4"
  local current="absent"
  if [ -f "$target" ]; then
    current="$(sha256_of "$target")"
  fi
  if [ "$current" = "$3" ]; then
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
  mark_restart_pending
  journal "act action=swap path=$4 from=$current to=$3"
  mv -f "$tmp" "$target"
  echo "installed=$1"
}
install_artifact {{artifacts}}
