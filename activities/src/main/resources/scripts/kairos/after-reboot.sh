#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# After the reboot: the boot ID changed, kairos-agent state names the boot entry the plan asked for
# (active_boot after an upgrade, passive_boot after a rollback), and the service is active. A host
# that came up in the other entry (boot assessment fell back) is reported, not hidden.

from_boot={{from_boot}}
service={{service}}
checks={{active_checks}}
interval={{check_interval_seconds}}

# inplace-include: kairos-plan

now="$(boot_id)"
if [ "$now" = "$from_boot" ]; then
  # Not down yet (the reboot is delayed): the worker asks again.
  echo "rebooted=false"
  exit 0
fi
echo "rebooted=true"
echo "boot_id=$now"
booted="$(booted_entry)"
echo "booted_entry=$booted"
wanted="$(plan_get entry)"
if [ "$(plan_get status)" = pending ] && [ "$(plan_get from_boot)" = "$from_boot" ]; then
  if [ "$booted" != "$wanted" ]; then
    plan_write "$(plan_get sha256)" "$wanted" fell_back "$from_boot"
  else
    plan_write "$(plan_get sha256)" "$wanted" done "$from_boot"
  fi
fi
if [ "$(plan_get status)" = fell_back ]; then
  echo "boot_fell_back=true"
  echo "wanted_entry=$wanted"
  exit 0
fi
# The services started fresh with this boot: record the restart done (see restart-state).
# inplace-include: restart-state
# inplace-include: wait-active
