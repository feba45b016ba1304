#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Writes the OS image with kairos-agent upgrade (the running image becomes the passive one) and plans
# the reboot into the active entry. An image already written by an earlier attempt (the boot plan
# names its digest) is not written again: a second upgrade would copy it over the fallback.

staging_dir={{staging_dir}}
image_path={{image_path}}

# inplace-include: kairos-plan

# name staged_file_name sha256 source
install_image() {
  local status
  status="$(plan_get status)"
  if [ "$(plan_get sha256)" = "$3" ] && [ "$(plan_get entry)" = active_boot ] \
      && { [ "$status" = pending ] || [ "$status" = done ]; }; then
    echo "already_installed=$1"
    return 0
  fi
  local src dir
  case "$4" in
    oci:*) src="$4" ;;
    *)
      # An air-gapped site: the staged archive holds the image's root filesystem.
      dir="$staging_dir/kairos-$3"
      if [ ! -f "$root$dir/.complete" ]; then
        rm -rf "$root$dir.tmp" "$root$dir"
        mkdir -p "$root$dir.tmp"
        tar -xf "$root$staging_dir/$2" -C "$root$dir.tmp"
        touch "$root$dir.tmp/.complete"
        mv "$root$dir.tmp" "$root$dir"
      fi
      src="dir:$dir"
      ;;
  esac
  local from
  from="$(boot_id)"
  journal "act action=os-upgrade path=$image_path from=$(plan_get sha256)/$status to=$3/pending"
  plan_write "$3" active_boot installing "$from"
  # kairos-agent's own output goes to stderr: stdout carries only the key=value report.
  kairos-agent upgrade --source "$src" >&2
  plan_write "$3" active_boot pending "$from"
  echo "installed=$1"
}
install_image {{artifacts}}
