#!/bin/bash
# inplace-step: restart
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Sign of life (docs/reliability.md, finding 8): while this script runs, a background loop writes a
# newline to stderr every 2 s, so the worker tells a slow script (still pulsing) from a hung one
# (silent: stopped, or its host or connection gone) and cuts only the hung one. The loop reads
# nothing and writes nothing else; its sleep holds no output pipe, so ending the loop never delays
# the script's end. The EXIT trap stops it (pulse_stop; any later EXIT trap must call it too).
pulse_loop() {
  while sleep 2 </dev/null >/dev/null 2>&1; do
    printf '\n' >&2 || return 0
  done
}
pulse_loop </dev/null >/dev/null &
pulse_pid=$!
pulse_stop() { kill "$pulse_pid" 2>/dev/null || true; }
trap pulse_stop EXIT
journal_script='after-reboot'
# Journal (ground truth for audits, see docs/reliability.md): one line when this script begins, one
# when it ends (its exit status, or the signal that stopped it) and one before each destructive
# action, appended to $root/var/log/inplace/journal. Each line is one O_APPEND write, so concurrent
# scripts never interleave; a journal that cannot be written never fails the script and nothing goes
# to stdout. The worker sets INPLACE_JOURNAL_WORKFLOW, _RUN and _ATTEMPT in front of the script.
journal_file="$root/var/log/inplace/journal"
journal() {
  {
    [ -d "${journal_file%/*}" ] || mkdir -p "${journal_file%/*}"
    printf '%s\n' "ts=${EPOCHREALTIME:-$(date +%s)} pid=$$ script=$journal_script wf=${INPLACE_JOURNAL_WORKFLOW:-none} run=${INPLACE_JOURNAL_RUN:-none} attempt=${INPLACE_JOURNAL_ATTEMPT:-0} event=$*" >> "$journal_file"
  } 2>/dev/null || true
}
# A signal ends the script as before (it is raised again) once its end line is written.
journal_signal() {
  trap - EXIT "$1"
  pulse_stop
  journal "end signal=$1"
  kill -s "$1" $$
}
journal_exit() {
  pulse_stop
  journal "end exit=$1"
}
trap 'journal_exit $?' EXIT
trap 'journal_signal HUP' HUP
trap 'journal_signal INT' INT
trap 'journal_signal TERM' TERM
trap 'journal_signal PIPE' PIPE
journal begin
# After the reboot: the boot ID changed, kairos-agent state names the boot entry the plan asked for
# (active_boot after an upgrade, passive_boot after a rollback), and the service is active. A host
# that came up in the other entry (boot assessment fell back) is reported, not hidden.

from_boot='0d039588-9b3c-4280-bcf8-33ebb80df53a'
service='k3s-agent'
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

now="$(boot_id)"
if [ "$now" = "$from_boot" ]; then
  # Not down yet (the reboot is delayed): the worker asks again.
  echo "rebooted=false"
  exit 0
fi
echo "rebooted=true"
echo "boot_id=$now"
booted="$(booted_entry)"
echo "booted_entry=$booted"
wanted="$(plan_get entry)"
if [ "$(plan_get status)" = pending ] && [ "$(plan_get from_boot)" = "$from_boot" ]; then
  if [ "$booted" != "$wanted" ]; then
    plan_write "$(plan_get sha256)" "$wanted" fell_back "$from_boot"
  else
    plan_write "$(plan_get sha256)" "$wanted" done "$from_boot"
  fi
fi
if [ "$(plan_get status)" = fell_back ]; then
  echo "boot_fell_back=true"
  echo "wanted_entry=$wanted"
  exit 0
fi
# The services started fresh with this boot: record the restart done (see restart-state).
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
