# name staged_file_name sha256 install_path mode
# Each artifact is read as few times as its checks allow (issue 12): a target that differs from the
# staged file (cmp stops at the first differing byte) is not hashed, the staged file is not hashed
# either, and the one digest computed is the copy's: the bytes about to be renamed into place. Names
# come from parameter expansion, not dirname/basename processes (a node runs many of these at once).
install_artifact() {
  local target="$root$4"
  local staged="$root$staging_dir/$2"
  if [ -L "$staged" ]; then
    echo "artifact $1: staged file $staging_dir/$2 is a symbolic link" >&2
    exit 1
  fi
  if [ ! -f "$staged" ]; then
    if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$3" ]; then
      echo "already_installed=$1"
      return 0
    fi
    echo "artifact $1: staged file $staging_dir/$2 is missing or does not have sha256 $3" >&2
    exit 1
  fi
  # The target's state before the swap, as the journal records it: "absent", "differs" (cmp found
  # a byte that is not the staged file's, so it is not sha256 $3 once the staged file's copy checks
  # out below) or its digest.
  local current="absent" compared=0
  if [ -f "$target" ]; then
    cmp -s "$target" "$staged" || compared=$?
    if [ "$compared" -eq 1 ]; then
      current="differs"
    else # the same bytes, or cmp could not tell (then the digest decides, as it would anyway)
      current="$(sha256_of "$target")"
      if [ "$current" = "$3" ]; then
        echo "already_installed=$1"
        return 0
      fi
    fi
  fi
  local dir="${4%/*}"
  dir="${dir:-/}"
  require_safe_dir "$dir"
  [ -d "$root$dir" ] || mkdir -p "$root$dir"
  # A new file no one else can have made or linked (mktemp), in a directory only root may write.
  local tmp
  tmp="$(mktemp "$root$dir/.${target##*/}.inplace-XXXXXXXX")"
  cp "$staged" "$tmp"
  chmod "$5" "$tmp"
  if [ "$(sha256_of "$tmp")" != "$3" ]; then
    rm -f "$tmp"
    # The staged file went bad: "differs" proved nothing, so the target decides by its digest.
    if [ "$current" = "differs" ] && [ "$(sha256_of "$target")" = "$3" ]; then
      echo "already_installed=$1"
      return 0
    fi
    if [ "$(sha256_of "$staged")" != "$3" ]; then
      echo "artifact $1: staged file $staging_dir/$2 is missing or does not have sha256 $3" >&2
    else
      echo "artifact $1: the copy next to $4 does not have sha256 $3" >&2
    fi
    exit 1
  fi
  mark_restart_pending
  journal "act action=swap path=$4 from=$current to=$3"
  mv -f "$tmp" "$target"
  echo "installed=$1"
}
install_artifact {{artifacts}}
