#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Reboots the host for its boot plan, once: a host whose boot ID is no longer the one the plan was
# made in has rebooted already (a retried step, or a worker that crashed meanwhile) and is left alone.
# The reboot is detached and delayed so this report reaches the worker before the session drops.

from_boot={{from_boot}}

# inplace-include: kairos-plan

if [ "$(plan_get status)" != pending ] || [ "$(plan_get from_boot)" != "$from_boot" ]; then
  echo "no reboot is planned from boot $from_boot (plan: $(plan_get status) from $(plan_get from_boot))" >&2
  exit 1
fi
if [ "$(boot_id)" != "$from_boot" ]; then
  echo "already_rebooted=true"
  exit 0
fi
journal "act action=reboot from_boot=$from_boot observed=$(boot_id)"
setsid nohup sh -c 'sleep 1; exec reboot' >/dev/null 2>&1 < /dev/null &
echo "rebooting=true"
