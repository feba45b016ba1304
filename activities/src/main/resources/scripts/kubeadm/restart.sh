#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Reloads systemd (the kubelet packages ship drop-ins the new binary may read), restarts the kubelet
# and waits until systemd reports it active.

service={{service}}
checks={{active_checks}}
interval={{check_interval_seconds}}

# inplace-include: kairos-plan
# inplace-include: reboot-pending

# inplace-include: restart-state
if restart_is_pending "$service" || ! systemctl is-active "$service" >/dev/null 2>&1; then
  systemctl daemon-reload
  journal "act action=restart service=$service"
  systemctl restart "$service"
else
  echo "already_restarted=true"
fi
# inplace-include: wait-active
