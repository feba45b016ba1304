#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Starts k0s with the binary now installed (`k0s start`: the k0scontroller or k0sworker service) and
# waits until systemd reports the service active. A k0s still running (the rollback, after the old
# binary was put back) is stopped first, so the binary in place is the one that runs.

service={{service}}
checks={{active_checks}}
interval={{check_interval_seconds}}
k0s_binary={{binary_path}}

# inplace-include: kairos-plan
# inplace-include: reboot-pending

k0s="$root$k0s_binary"
if [ ! -x "$k0s" ]; then
  echo "no k0s binary at $k0s_binary" >&2
  exit 1
fi
# k0s's own output goes to stderr: stdout carries only the key=value report.
# inplace-include: restart-state
if restart_is_pending "$service" || ! systemctl is-active "$service" >/dev/null 2>&1; then
  journal "act action=restart service=$service"
  if "$k0s" status >/dev/null 2>&1; then
    "$k0s" stop >&2
  fi
  "$k0s" start >&2
else
  echo "already_restarted=true"
fi
# inplace-include: wait-active
