#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Starts k0s with the binary now installed (`k0s start`: the k0scontroller or k0sworker service) and
# waits until systemd reports the service active. A k0s still running (the rollback, after the old
# binary was put back) is stopped first, so the binary in place is the one that runs.

service='k0scontroller'
checks='5'
interval='2'
k0s_binary='/usr/local/bin/k0s'

k0s="$root$k0s_binary"
if [ ! -x "$k0s" ]; then
  echo "no k0s binary at $k0s_binary" >&2
  exit 1
fi
# k0s's own output goes to stderr: stdout carries only the key=value report.
if "$k0s" status >/dev/null 2>&1; then
  "$k0s" stop >&2
fi
"$k0s" start >&2
attempt=1
while :; do
  if systemctl is-active "$service" >/dev/null 2>&1; then
    echo "service_active=true"
    exit 0
  fi
  if [ "$attempt" -ge "$checks" ]; then
    break
  fi
  attempt=$((attempt + 1))
  sleep "$interval"
done
echo "service $service is not active after restart" >&2
systemctl status "$service" --no-pager --lines=20 >&2 || true
exit 1
