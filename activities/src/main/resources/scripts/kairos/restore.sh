#!/bin/bash
# inplace-step: restore
set -eu
root="${INPLACE_HOST_ROOT:-}"
# The rollback of a Kairos upgrade is the fallback entry: the previous image, kept as passive. It is
# selected for the next boots and the boot plan asks the restart step to reboot into it. A host that
# already runs it (boot assessment fell back) needs no reboot. An upgrade that never completed left
# the active image as it was (kairos-agent upgrade is atomic): nothing to restore.

image_path={{image_path}}

# inplace-include: kairos-plan

status="$(plan_get status)"
entry="$(plan_get entry)"
sha="$(plan_get sha256)"
now="$(boot_id)"
booted="$(booted_entry)"
case "$entry/$status" in
  active_boot/pending|active_boot/done|active_boot/fell_back)
    journal "act action=boot-select entry=fallback from=$entry/$status to=passive_boot"
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
