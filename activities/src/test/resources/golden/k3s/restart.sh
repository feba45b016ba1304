#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Restarts the distribution's service and waits until systemd reports it active.

service='k3s'
checks='5'
interval='2'

# The boot plan of a Kairos host: which image the next boot must come up in, from which boot, and
# how far it got (installing, pending, done, fell_back). Kept on the persistent /var/lib so a
# retried or resumed step reads what an earlier attempt did (docs/kairos.md).
kairos_dir="$root/var/lib/inplace/kairos"
plan_file="$kairos_dir/boot-plan"
boot_id() {
  tr -d '[:space:]' < "$root/proc/sys/kernel/random/boot_id"
}
plan_get() { # key
  if [ -f "$plan_file" ]; then
    awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$plan_file"
  fi
}
plan_write() { # sha256 entry status from_boot
  mkdir -p "$kairos_dir"
  printf 'sha256=%s\nentry=%s\nstatus=%s\nfrom_boot=%s\n' "$1" "$2" "$3" "$4" > "$plan_file.tmp"
  mv -f "$plan_file.tmp" "$plan_file"
}
booted_entry() {
  kairos-agent state get boot 2>/dev/null | tr -d '[:space:]"'
}
# A Kairos OS upgrade (or its rollback) left a reboot to do: report it and change nothing; the
# worker then reboots the host instead of restarting the service (docs/kairos.md).
if [ "$(plan_get status)" = pending ]; then
  echo "reboot_pending=true"
  echo "reboot_from_boot=$(plan_get from_boot)"
  echo "reboot_entry=$(plan_get entry)"
  echo "boot_id=$(boot_id)"
  exit 0
fi

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
