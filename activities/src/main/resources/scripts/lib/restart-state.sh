# Restart bookkeeping on the host (docs/reliability.md, "Repeated destructive actions"): a swap or
# restore marks a restart pending; a restart that completed records it and clears the mark. A restart
# script then observes before it acts: nothing pending since this service's last completed restart
# means the service already runs the files in place (a retry whose answer was lost), so it does not
# restart again.
restart_state_dir="$root/var/lib/inplace"
mark_restart_pending() {
  { [ -d "$restart_state_dir" ] || mkdir -p "$restart_state_dir"; } && : > "$restart_state_dir/restart-pending"
}
restart_is_pending() {
  [ -e "$restart_state_dir/restart-pending" ] || [ ! -e "$restart_state_dir/restarted-$1" ]
}
restart_completed() {
  { [ -d "$restart_state_dir" ] || mkdir -p "$restart_state_dir"; } && : > "$restart_state_dir/restarted-$1" \
    && { [ ! -e "$restart_state_dir/restart-pending" ] || rm -f "$restart_state_dir/restart-pending"; }
}
