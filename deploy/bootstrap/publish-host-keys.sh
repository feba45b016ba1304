#!/bin/sh
# inplace: publish this host's SSH host public keys on its own Node object, so that
# `inplace hosts scan --from-node-annotations` can pin them without anyone copying a fingerprint.
# Run once at boot, after the node joined (postKubeadmCommands, postK3sCommands, postStartCommands):
# docs/host-keys.md. It writes with the node's own kubelet credentials: the Node authorizer and the
# NodeRestriction admission plugin let a node change only its own Node, so a key published here
# speaks for this host alone. It reads public keys only; nothing secret leaves the host.
#
# Settings (environment), each found on its own when unset:
#   INPLACE_KUBELET_KUBECONFIG  the kubelet's kubeconfig (kubeadm, k3s and k0s paths are tried)
#   INPLACE_KUBECTL             the kubectl command (kubectl, k3s kubectl, k0s kubectl are tried)
#   INPLACE_HOST_KEYS           the host's public key files (default /etc/ssh/ssh_host_*_key.pub)
#   INPLACE_PUBLISH_ATTEMPTS    tries while the Node is not registered yet (default 60, 5 s apart)
set -eu

annotation="upgrade.inplace.dev/ssh-host-keys"
attempts="${INPLACE_PUBLISH_ATTEMPTS:-60}"
pause="${INPLACE_PUBLISH_PAUSE:-5}"

fail() {
  echo "publish-host-keys: $*" >&2
  exit 1
}

kubeconfig="${INPLACE_KUBELET_KUBECONFIG:-}"
if [ -z "$kubeconfig" ]; then
  for candidate in /etc/kubernetes/kubelet.conf /var/lib/rancher/k3s/agent/kubelet.kubeconfig /var/lib/k0s/kubelet.conf; do
    if [ -r "$candidate" ]; then
      kubeconfig="$candidate"
      break
    fi
  done
fi
[ -n "$kubeconfig" ] && [ -r "$kubeconfig" ] || fail "no readable kubelet kubeconfig (set INPLACE_KUBELET_KUBECONFIG)"

kubectl="${INPLACE_KUBECTL:-}"
if [ -z "$kubectl" ]; then
  if command -v kubectl >/dev/null 2>&1; then
    kubectl="kubectl"
  elif command -v k3s >/dev/null 2>&1; then
    kubectl="k3s kubectl"
  elif command -v k0s >/dev/null 2>&1; then
    kubectl="k0s kubectl"
  else
    fail "no kubectl, k3s or k0s on PATH (set INPLACE_KUBECTL)"
  fi
fi

# Public keys only, "TYPE BASE64" per line: the comment (often user@host) is dropped.
keys=""
for file in ${INPLACE_HOST_KEYS:-/etc/ssh/ssh_host_*_key.pub}; do
  [ -r "$file" ] || continue
  line=$(awk 'NF >= 2 && $1 ~ /^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa)$/ && $2 ~ /^[A-Za-z0-9+\/]+=*$/ { print $1 " " $2; exit }' "$file")
  [ -n "$line" ] || fail "$file is not an SSH public key"
  keys="${keys:+$keys
}$line"
done
[ -n "$keys" ] || fail "no host public key found (${INPLACE_HOST_KEYS:-/etc/ssh/ssh_host_*_key.pub})"

attempt=1
while :; do
  # The kubelet's identity is system:node:<name>: the Node it may write is its own.
  if user=$($kubectl --kubeconfig "$kubeconfig" auth whoami -o 'jsonpath={.status.userInfo.username}' 2>/dev/null); then
    case "$user" in
      system:node:?*) node="${user#system:node:}" ;;
      *) fail "the kubeconfig $kubeconfig is not a node's (it authenticates as '$user')" ;;
    esac
    if $kubectl --kubeconfig "$kubeconfig" annotate node "$node" --overwrite "$annotation=$keys" >/dev/null; then
      echo "publish-host-keys: published $(echo "$keys" | wc -l | tr -d ' ') host key(s) on Node $node"
      exit 0
    fi
  fi
  [ "$attempt" -lt "$attempts" ] || fail "could not annotate this node's Node after $attempts attempts"
  attempt=$((attempt + 1))
  sleep "$pause"
done
