#!/bin/bash
# inplace-step: install
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
journal_script='install'
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
# Writes the OS image with kairos-agent upgrade (the running image becomes the passive one) and plans
# the reboot into the active entry. An image already written by an earlier attempt (the boot plan
# names its digest) is not written again: a second upgrade would copy it over the fallback.

staging_dir='/var/lib/inplace/staging'
image_path='/run/initramfs/cos-state/cOS/active.img'

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

# name staged_file_name sha256 source
install_image() {
  local status
  status="$(plan_get status)"
  if [ "$(plan_get sha256)" = "$3" ] && [ "$(plan_get entry)" = active_boot ] \
      && { [ "$status" = pending ] || [ "$status" = done ]; }; then
    echo "already_installed=$1"
    return 0
  fi
  local src dir
  case "$4" in
    oci:*) src="$4" ;;
    *)
      # An air-gapped site: the staged archive holds the image's root filesystem.
      dir="$staging_dir/kairos-$3"
      if [ ! -f "$root$dir/.complete" ]; then
        rm -rf "$root$dir.tmp" "$root$dir"
        mkdir -p "$root$dir.tmp"
        tar -xf "$root$staging_dir/$2" -C "$root$dir.tmp"
        touch "$root$dir.tmp/.complete"
        mv "$root$dir.tmp" "$root$dir"
      fi
      src="dir:$dir"
      ;;
  esac
  local from
  from="$(boot_id)"
  journal "act action=os-upgrade path=$image_path from=$(plan_get sha256)/$status to=$3/pending"
  plan_write "$3" active_boot installing "$from"
  # kairos-agent's own output goes to stderr: stdout carries only the key=value report.
  kairos-agent upgrade --source "$src" >&2
  plan_write "$3" active_boot pending "$from"
  echo "installed=$1"
}
install_image 'os-image' 'os-image.5555555555555555555555555555555555555555555555555555555555555555' '5555555555555555555555555555555555555555555555555555555555555555' 'https://releases.example.com/kairos/v1.31.2-k3s1-rootfs.tar'
