#!/bin/bash
# inplace-step: upgrade
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
journal_script='upgrade'
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
# Runs kubeadm's own upgrade with the kubeadm just installed: on the first control plane
# `kubeadm upgrade plan` then `kubeadm upgrade apply <version> --yes` (static pods, etcd, addons,
# kubelet config), elsewhere `kubeadm upgrade node`. From v1.30 the options go in an
# UpgradeConfiguration (kubeadm.k8s.io/v1beta4) passed with --config. The CoreDNS migration checks
# are ignored (see docs/kubeadm.md). kubeadm is idempotent; a control plane whose static-pod
# manifests already run the target is reported as upgraded without running it again.

bin_dir='/usr/bin'
version='v1.31.2'
mode='apply'
role='control-plane'
manifests_dir='/etc/kubernetes/manifests'
config_file='/var/lib/inplace/staging/kubeadm-upgrade-v1.31.2.yaml'
use_config='true'
ignored='CoreDNSUnsupportedPlugins,CoreDNSMigration'

# Directories a root script uses (issue 34, docs/security.md): from / down, a component is unsafe
# when it is a symbolic link, not a directory, owned by anyone but the user this script runs as (root
# on a host) or writable by others; whoever owns or may write a directory can swap what is in it.
# A component that does not exist yet is fine (its parent was checked; the caller creates it).
# safe_dir_problem path [user]: prints the problem and returns 1; user may also own the last
# component (the login user's staging dir, which SFTP writes into).
safe_dir_problem() {
  local rest="${1#/}" cur="$root" part owner mode self allowed=""
  self="$(id -u)"
  if [ -n "${2:-}" ]; then
    allowed="$(id -u "$2")"
  fi
  while [ -n "$rest" ]; do
    part="${rest%%/*}"
    if [ "$part" = "$rest" ]; then rest=""; else rest="${rest#*/}"; fi
    cur="$cur/$part"
    if [ -L "$cur" ]; then
      echo "${cur#"$root"} is a symbolic link"
      return 1
    fi
    [ -e "$cur" ] || return 0
    if [ ! -d "$cur" ]; then
      echo "${cur#"$root"} is not a directory"
      return 1
    fi
    read -r owner mode <<< "$(stat -c '%u %a' "$cur")"
    if [ "$owner" != "$self" ] && { [ -n "$rest" ] || [ "$owner" != "$allowed" ]; }; then
      echo "${cur#"$root"} is owned by uid $owner, not $self"
      return 1
    fi
    if (( (8#$mode & 8#002) != 0 )); then
      echo "${cur#"$root"} is writable by others (mode $mode)"
      return 1
    fi
  done
}
# require_safe_dir path [user]: as safe_dir_problem, but the script stops (exit 1) on a problem.
require_safe_dir() {
  local problem
  if ! problem="$(safe_dir_problem "$@")"; then
    echo "refusing $1: $problem" >&2
    exit 1
  fi
}

# kubeadm runs as root from the layout's bin dir only: no link on the way, the dir root's alone.
require_safe_dir "$bin_dir"
kubeadm="$root$bin_dir/kubeadm"
if [ -L "$kubeadm" ]; then
  echo "refusing $bin_dir/kubeadm: it is a symbolic link; only the file itself is run" >&2
  exit 1
fi

# Prints the newest kubeadm backup of the static-pod manifests, or nothing.
report_backup() {
  local newest="" d
  for d in "$root/etc/kubernetes/tmp/kubeadm-backup-manifests-"*; do
    if [ -d "$d" ] && { [ -z "$newest" ] || [ "$d" -nt "$newest" ]; }; then
      newest="$d"
    fi
  done
  echo "backup_dir=${newest#"$root"}"
}

installed="$("$kubeadm" version -o short)"
if [ "$installed" != "$version" ]; then
  echo "kubeadm in $bin_dir reports $installed, expected $version: the install step did not put it in place" >&2
  exit 1
fi

command="kubeadm upgrade $mode"
if [ "$mode" = apply ]; then
  command="kubeadm upgrade apply $version"
fi
echo "command=$command"

apiserver="$root$manifests_dir/kube-apiserver.yaml"
if [ "$role" = control-plane ] && [ -f "$apiserver" ] && grep -qF "/kube-apiserver:$version" "$apiserver"; then
  echo "already_upgraded=true"
  report_backup
  exit 0
fi

flags=()
if [ "$use_config" = true ]; then
  # ["CoreDNSUnsupportedPlugins", "CoreDNSMigration"]
  list=""
  IFS=, read -r -a errors <<< "$ignored"
  for e in "${errors[@]}"; do
    list="$list${list:+, }\"$e\""
  done
  config_dir="${config_file%/*}"
  require_safe_dir "$config_dir" "${SUDO_USER:-}"
  mkdir -p "$root$config_dir"
  # A new file (mktemp), never a fixed name someone could have linked elsewhere.
  config_tmp="$(mktemp "$root$config_file.XXXXXXXX")"
  cat > "$config_tmp" <<CONFIG
apiVersion: kubeadm.k8s.io/v1beta4
kind: UpgradeConfiguration
apply:
  kubernetesVersion: $version
  certificateRenewal: true
  etcdUpgrade: true
  ignorePreflightErrors: [$list]
plan:
  kubernetesVersion: $version
  ignorePreflightErrors: [$list]
node:
  certificateRenewal: true
  etcdUpgrade: true
  ignorePreflightErrors: [$list]
CONFIG
  mv -f "$config_tmp" "$root$config_file"
  flags=(--config "$root$config_file")
else
  flags=(--ignore-preflight-errors="$ignored")
fi

# What was observed first: a control plane's API server manifest not yet at the target.
observed=none
if [ "$role" = control-plane ]; then
  observed=manifest-behind
fi
journal "act action=kubeadm-upgrade mode=$mode version=$version observed=$observed"
# kubeadm's own output goes to stderr: stdout carries only the key=value report.
if [ "$mode" = apply ]; then
  "$kubeadm" upgrade plan "$version" "${flags[@]}" >&2
  "$kubeadm" upgrade apply "$version" "${flags[@]}" --yes >&2
else
  "$kubeadm" upgrade node "${flags[@]}" >&2
fi
echo "already_upgraded=false"
if [ "$role" = control-plane ]; then
  report_backup
else
  echo "backup_dir="
fi
