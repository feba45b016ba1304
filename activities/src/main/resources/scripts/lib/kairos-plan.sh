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
