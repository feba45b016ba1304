#!/bin/bash
# inplace-step: upgrade
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Runs kubeadm's own upgrade with the kubeadm just installed: on the first control plane
# `kubeadm upgrade plan` then `kubeadm upgrade apply <version> --yes` (static pods, etcd, addons,
# kubelet config), elsewhere `kubeadm upgrade node`. From v1.30 the options go in an
# UpgradeConfiguration (kubeadm.k8s.io/v1beta4) passed with --config. The CoreDNS migration checks
# are ignored (see docs/kubeadm.md). kubeadm is idempotent; a control plane whose static-pod
# manifests already run the target is reported as upgraded without running it again.

bin_dir={{bin_dir}}
version={{version}}
mode={{mode}}
role={{role}}
manifests_dir={{manifests_dir}}
config_file={{config_file}}
use_config={{use_config}}
ignored={{ignore_preflight_errors}}

# inplace-include: safe-dir

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
