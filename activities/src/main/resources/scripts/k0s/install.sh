#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Stops k0s with the binary installed now (`k0s stop`: its controller or worker service), then puts
# each staged artifact in place: a copy next to the target, then an atomic rename over it; the
# previous binary is kept by the backup step. The airgap image bundle lands in /var/lib/k0s/images/,
# which k0s imports when it starts. The restart step runs `k0s start`. Safe to run again after a
# crash: a stopped k0s stays stopped and installed artifacts are reported as such.

staging_dir={{staging_dir}}
bin_dir={{bin_dir}}

# inplace-include: safe-dir

# k0s runs as root from the layout's bin dir only: no link on the way, the dir root's alone.
require_safe_dir "$bin_dir"
k0s="$root$bin_dir/k0s"
if [ -L "$k0s" ]; then
  echo "refusing $bin_dir/k0s: it is a symbolic link; only the file itself is run" >&2
  exit 1
fi
if [ -x "$k0s" ] && "$k0s" status >/dev/null 2>&1; then
  journal "act action=stop service=k0s from=running"
  # k0s's own output goes to stderr: stdout carries only the key=value report.
  "$k0s" stop >&2
  echo "stopped=k0s"
else
  echo "already_stopped=k0s"
fi

# inplace-include: sha256

# inplace-include: restart-state
# inplace-include: safe-dir
# inplace-include: install-artifacts
