attempt=1
while :; do
  if systemctl is-active "$service" >/dev/null 2>&1; then
    restart_completed "$service" || true # unrecorded: a retry restarts again, which is safe
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
