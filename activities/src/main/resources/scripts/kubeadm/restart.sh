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

systemctl daemon-reload
journal "act action=restart service=$service"
systemctl restart "$service"
# inplace-include: wait-active
