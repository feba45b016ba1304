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
