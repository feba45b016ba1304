#!/bin/bash
# inplace-step: restore
set -eu
root="${INPLACE_HOST_ROOT:-}"
# The rollback of a Kairos upgrade is the fallback entry: the previous image, kept as passive. It is
# selected for the next boots and the boot plan asks the restart step to reboot into it. A host that
# already runs it (boot assessment fell back) needs no reboot. An upgrade that never completed left
# the active image as it was (kairos-agent upgrade is atomic): nothing to restore.

image_path='/run/initramfs/cos-state/cOS/active.img'

# The boot plan of a Kairos host: which image the next boot must come up in, from which boot, and
# how far it got (installing, pending, done, fell_back). Kept on the persistent /var/lib so a
# retried or resumed step reads what an earlier attempt did (docs/kairos.md).
kairos_dir="$root/var/lib/inplace/kairos"
plan_file="$kairos_dir/boot-plan"
boot_id() {
  tr -d '[:space:]' < "$root/proc/sys/kernel/random/boot_id"
}
plan_get() { # key
  if [ -f "$plan_file" ]; then
    awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$plan_file"
  fi
}
plan_write() { # sha256 entry status from_boot
  mkdir -p "$kairos_dir"
  printf 'sha256=%s\nentry=%s\nstatus=%s\nfrom_boot=%s\n' "$1" "$2" "$3" "$4" > "$plan_file.tmp"
  mv -f "$plan_file.tmp" "$plan_file"
}
booted_entry() {
  kairos-agent state get boot 2>/dev/null | tr -d '[:space:]"'
}

status="$(plan_get status)"
entry="$(plan_get entry)"
sha="$(plan_get sha256)"
now="$(boot_id)"
booted="$(booted_entry)"
case "$entry/$status" in
  active_boot/pending|active_boot/done|active_boot/fell_back)
    kairos-agent bootentry --select fallback >&2
    if [ "$booted" = passive_boot ]; then
      plan_write "$sha" passive_boot done "$now"
    else
      plan_write "$sha" passive_boot pending "$now"
    fi
    echo "restored=$image_path (fallback entry: the previous image)"
    ;;
  passive_boot/pending|passive_boot/done)
    # An earlier attempt of this rollback got this far.
    echo "restored=$image_path (fallback entry: the previous image)"
    ;;
  active_boot/installing)
    plan_write "$sha" active_boot aborted "$now"
    echo "kairos-agent upgrade did not complete: the active image was left as it was" >&2
    ;;
  *)
    ;;
esac
