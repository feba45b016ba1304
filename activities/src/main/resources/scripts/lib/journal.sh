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
