#!/bin/bash
# inplace-step: backup
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
journal_script='backup'
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
# Nothing is copied on a Kairos host: kairos-agent upgrade keeps the image the host runs as the
# passive (fallback) image. That holds only when the host runs its active entry: from the passive or
# recovery entry, an upgrade would overwrite the fallback with the active image, so it is refused.

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

booted="$(booted_entry)"
if [ "$booted" != active_boot ]; then
  echo "the host runs its ${booted:-unknown} boot entry, not active_boot: kairos-agent upgrade would replace" \
    "the fallback image with the active one; boot the active entry (or reinstall) before upgrading" >&2
  exit 1
fi
echo "backed_up=the running image (kairos-agent upgrade keeps it as the passive image)"
