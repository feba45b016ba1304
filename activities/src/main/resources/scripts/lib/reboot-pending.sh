# A Kairos OS upgrade (or its rollback) left a reboot to do: report it and change nothing; the
# worker then reboots the host instead of restarting the service (docs/kairos.md).
if [ "$(plan_get status)" = pending ]; then
  echo "reboot_pending=true"
  echo "reboot_from_boot=$(plan_get from_boot)"
  echo "reboot_entry=$(plan_get entry)"
  echo "boot_id=$(boot_id)"
  exit 0
fi
