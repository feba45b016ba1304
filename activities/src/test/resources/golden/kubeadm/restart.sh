#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Reloads systemd (the kubelet packages ship drop-ins the new binary may read), restarts the kubelet
# and waits until systemd reports it active.

service='kubelet'
checks='5'
interval='2'

systemctl daemon-reload
systemctl restart "$service"
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
