#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Restarts the distribution's service and waits until systemd reports it active.

service={{service}}
checks={{active_checks}}
interval={{check_interval_seconds}}

# inplace-include: kairos-plan
# inplace-include: reboot-pending

journal "act action=restart service=$service"
systemctl restart "$service"
# inplace-include: wait-active
