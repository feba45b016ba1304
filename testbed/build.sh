#!/usr/bin/env bash
# Builds the test bed's real components from their Go modules, at the versions pinned in
# testbed/versions.env, into a cache outside the repository (docs/testbed.md).
#
#   testbed/build.sh [component ...]   build what is missing or out of date (all by default)
#   testbed/build.sh --env             print the export lines that put the built tools first on PATH
#   testbed/build.sh --check           exit 0 if every component is built at its pinned version
#
# Idempotent: a component whose binary exists with a stamp naming its pinned version is skipped. One
# build at a time (each `go build` uses every core). Nothing prebuilt is downloaded: every binary is
# compiled here from the module proxy's sources.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

cache="${INPLACE_TESTBED_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/inplace-testbed}"
bin="$cache/bin"
stamps="$cache/stamps"
manifests="$cache/manifests"
work="$cache/modules"

all_components=(kustomize kubectl etcd kube-apiserver kube-controller-manager temporal clusterctl
  capi-manager kubeadm-control-plane-manager kubeadm-bootstrap-manager capi-manifests
  k3s-control-plane-manager k3s-bootstrap-manager k3s-manifests)

# The version each component is pinned to, as its stamp records it.
pinned() {
  case "$1" in
    kustomize) echo "$KUSTOMIZE_VERSION" ;;
    kubectl|kube-apiserver|kube-controller-manager) echo "$KUBERNETES_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    temporal) echo "$TEMPORAL_CLI_VERSION" ;;
    clusterctl|capi-manager|kubeadm-control-plane-manager|kubeadm-bootstrap-manager|capi-manifests) echo "$CLUSTER_API_VERSION" ;;
    k3s-control-plane-manager|k3s-bootstrap-manager|k3s-manifests) echo "$CLUSTER_API_K3S_VERSION" ;;
    *) echo "testbed: unknown component '$1' (known: ${all_components[*]})" >&2; exit 2 ;;
  esac
}

# A component is a binary in bin/, or (the *-manifests ones) a directory of YAML in manifests/.
artifact() { case "$1" in *-manifests) echo "$manifests/$1" ;; *) echo "$bin/$1" ;; esac; }
built() { [ -e "$(artifact "$1")" ] && [ "$(cat "$stamps/$1" 2>/dev/null)" = "$(pinned "$1")" ]; }

if [ "${1:-}" = --env ]; then
  echo "export INPLACE_TESTBED_HOME=\"$cache\""
  echo "export INPLACE_TESTBED_MANIFESTS=\"$manifests\""
  echo "export PATH=\"$bin:\$PATH\""
  exit 0
fi
if [ "${1:-}" = --check ]; then
  missing=()
  for c in "${all_components[@]}"; do built "$c" || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "testbed: not built at the pinned version: ${missing[*]} (run ./inplace testbed build)" >&2
  exit 1
fi

say() { printf 'testbed: %s\n' "$*" >&2; }

components=("$@")
[ ${#components[@]} -gt 0 ] || components=("${all_components[@]}")
for c in "${components[@]}"; do pinned "$c" >/dev/null; done
stale=()
for c in "${components[@]}"; do built "$c" || stale+=("$c"); done
if [ ${#stale[@]} -eq 0 ]; then
  say "ready in $bin (${#components[@]} components at their pinned versions)"
  exit 0
fi

command -v go >/dev/null || {
  echo "testbed: a Go toolchain (go 1.24 or newer) is needed to build ${stale[*]}: install Go (https://go.dev/doc/install; Debian 12's golang-go is too old) and retry" >&2
  exit 2
}
mkdir -p "$bin" "$stamps" "$work" "$manifests" "$cache/logs"
# One build at a time on this cache: a second caller (another test JVM, a second shell) waits here.
exec 9>"$cache/.lock"
if ! flock -n 9; then
  say "another build of the test bed is running; waiting for it"
  flock 9
fi
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0

# A wrapper module of our own: `go install` refuses modules with replace directives, so each
# component is built inside a module that requires it (and, for Kubernetes, maps its staging modules
# to their published versions). Only the wrapper's own replace directives count.
wrapper() { # name -> prints the wrapper's directory, freshly initialised
  local dir="$work/$1"
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && go mod init "inplace.testbed/$1" >/dev/null 2>&1)
  echo "$dir"
}

# Kubernetes' version ldflags, as its own build sets them (hack/lib/version.sh): without them the
# API server reports v0.0.0 and CAPI refuses it.
kube_ldflags() {
  local v="$KUBERNETES_VERSION" major minor flags=""
  major="${v#v}"; major="${major%%.*}"
  minor="${v#v*.}"; minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "-s -w$flags"
}

kube_wrapper() { # the wrapper module shared by the Kubernetes binaries
  local dir="$work/kubernetes"
  if [ "$(cat "$dir/.pinned" 2>/dev/null)" = "$KUBERNETES_VERSION" ]; then echo "$dir"; return; fi
  dir="$(wrapper kubernetes)"
  local staging="v0.${KUBERNETES_VERSION#v1.}"
  (
    cd "$dir"
    say "resolving k8s.io/kubernetes $KUBERNETES_VERSION (staging modules at $staging)"
    go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" >/dev/null
    local gomod; gomod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBERNETES_VERSION.mod"
    local args=()
    while read -r mod _; do args+=("-replace=$mod=$mod@$staging"); done \
      < <(sed -n 's/^[[:space:]]*\(k8s\.io\/[a-z0-9-]*\) => \.\/staging\/.*/\1/p' "$gomod")
    [ ${#args[@]} -gt 0 ] || { say "no staging replace directives found in $gomod"; exit 1; }
    go mod edit "${args[@]}" -require="k8s.io/kubernetes@$KUBERNETES_VERSION"
    echo "$KUBERNETES_VERSION" > .pinned
  ) >&2
  echo "$dir"
}

build_kube() { # component: a main package of k8s.io/kubernetes/cmd
  local name="$1" dir; dir="$(kube_wrapper)"
  (cd "$dir" && go get "k8s.io/kubernetes/cmd/$name@$KUBERNETES_VERSION" >/dev/null 2>&1 || true
   go build -trimpath -ldflags "$(kube_ldflags)" -o "$bin/$name" "k8s.io/kubernetes/cmd/$name")
}

build_etcd() {
  local dir; dir="$(wrapper etcd)"
  (cd "$dir"
   go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "go.etcd.io/etcd/api/v3@$ETCD_VERSION" \
     "go.etcd.io/etcd/client/pkg/v3@$ETCD_VERSION" "go.etcd.io/etcd/client/v3@$ETCD_VERSION" \
     "go.etcd.io/etcd/pkg/v3@$ETCD_VERSION" >/dev/null
   go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
}

build_kustomize() {
  GOBIN="$bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

build_temporal() {
  GOBIN="$bin" go install -trimpath -ldflags "-s -w" "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
}

capi_wrapper() {
  local dir="$work/cluster-api"
  if [ "$(cat "$dir/.pinned" 2>/dev/null)" = "$CLUSTER_API_VERSION" ]; then echo "$dir"; return; fi
  dir="$(wrapper cluster-api)"
  (cd "$dir" && go get "sigs.k8s.io/cluster-api@$CLUSTER_API_VERSION" >/dev/null && echo "$CLUSTER_API_VERSION" > .pinned) >&2
  echo "$dir"
}

build_capi() { # component, main package inside sigs.k8s.io/cluster-api
  local name="$1" pkg="$2" dir; dir="$(capi_wrapper)"
  local v="$CLUSTER_API_VERSION" flags="-s -w"
  flags+=" -X sigs.k8s.io/cluster-api/version.gitVersion=$v -X sigs.k8s.io/cluster-api/version.gitTreeState=clean"
  local major="${v#v}" minor; major="${major%%.*}"; minor="${v#v*.}"; minor="${minor%%.*}"
  flags+=" -X sigs.k8s.io/cluster-api/version.buildDate=1970-01-01T00:00:00Z"
  flags+=" -X sigs.k8s.io/cluster-api/version.gitMajor=$major -X sigs.k8s.io/cluster-api/version.gitMinor=$minor"
  (cd "$dir" && go get "$pkg@$v" >/dev/null 2>&1 || true
   go build -trimpath -ldflags "$flags" -o "$bin/$name" "$pkg")
}

# Cluster API's own manifests (CRDs, webhook configurations, RBAC) from the same module source the
# managers are built from: config/ of the core, and of the kubeadm control plane and bootstrap providers.
build_capi_manifests() {
  local dir src; dir="$(capi_wrapper)"
  src="$(cd "$dir" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)"
  [ -d "$src/config/crd/bases" ] || { say "no config/crd/bases in $src"; return 1; }
  rm -rf "$manifests/capi-manifests"; mkdir -p "$manifests/capi-manifests"
  cp -r "$src/config" "$manifests/capi-manifests/core"
  cp -r "$src/controlplane/kubeadm/config" "$manifests/capi-manifests/kubeadm-control-plane"
  cp -r "$src/bootstrap/kubeadm/config" "$manifests/capi-manifests/kubeadm-bootstrap"
  chmod -R u+w "$manifests/capi-manifests"
}

# cluster-api-k3s (KThreesControlPlane and KThreesConfig), in a wrapper module of its own: it is built
# on an older Cluster API (v1.10) and Kubernetes libraries than the core's, which must not mix.
k3s_wrapper() {
  local dir="$work/cluster-api-k3s"
  if [ "$(cat "$dir/.pinned" 2>/dev/null)" = "$CLUSTER_API_K3S_VERSION" ]; then echo "$dir"; return; fi
  dir="$(wrapper cluster-api-k3s)"
  (cd "$dir" && go get "github.com/k3s-io/cluster-api-k3s@$CLUSTER_API_K3S_VERSION" >/dev/null \
     && echo "$CLUSTER_API_K3S_VERSION" > .pinned) >&2
  echo "$dir"
}

# Its two main packages hard-code the webhook server's port (9443, on every interface) and leave its
# certificate directory at controller-runtime's default, so two of them cannot run on one host. Go
# refuses an -overlay of files in the module cache, so each main.go is copied into the wrapper module
# as a package of its own with one change, its `Port: 9443,` line, which then reads
# INPLACE_TESTBED_WEBHOOK_PORT, _HOST and _CERT_DIR (unset: upstream's values). Every other line of
# main.go, and every controller and webhook it starts, is upstream's.
build_k3s() { # component, main package directory in the module (controlplane or bootstrap)
  local name="$1" sub="$2" dir src; dir="$(k3s_wrapper)"
  local mod=github.com/k3s-io/cluster-api-k3s
  src="$(cd "$dir" && go list -m -f '{{.Dir}}' "$mod")"
  grep -q '^[[:space:]]*Port: 9443,$' "$src/$sub/main.go" \
    || { say "$src/$sub/main.go has no 'Port: 9443,' line to change: read it and adapt build.sh"; return 1; }
  local main="$dir/$sub"
  rm -rf "$main"; mkdir -p "$main"
  sed 's/^\([[:space:]]*\)Port: 9443,$/\1Port: testbedWebhookPort(), Host: os.Getenv("INPLACE_TESTBED_WEBHOOK_HOST"), CertDir: os.Getenv("INPLACE_TESTBED_WEBHOOK_CERT_DIR"),/' \
    "$src/$sub/main.go" > "$main/main.go"
  cat > "$main/testbed_webhook.go" <<'EOF'
package main

// Added at build time by inplace's testbed/build.sh (not part of cluster-api-k3s).

import (
	"os"
	"strconv"
)

// testbedWebhookPort is INPLACE_TESTBED_WEBHOOK_PORT, or upstream's 9443 when it is unset.
func testbedWebhookPort() int {
	port, err := strconv.Atoi(os.Getenv("INPLACE_TESTBED_WEBHOOK_PORT"))
	if err != nil {
		return 9443
	}
	return port
}
EOF
  (cd "$dir" && go get "$mod/$sub@$CLUSTER_API_K3S_VERSION" >/dev/null 2>&1 || true
   go build -trimpath -ldflags "-s -w" -o "$bin/$name" "./$sub")
}

# cluster-api-k3s's own manifests (CRDs with its contract labels, webhook configurations), from the
# module source the managers are built from.
build_k3s_manifests() {
  local dir src; dir="$(k3s_wrapper)"
  src="$(cd "$dir" && go list -m -f '{{.Dir}}' github.com/k3s-io/cluster-api-k3s)"
  [ -d "$src/controlplane/config/crd/bases" ] || { say "no controlplane/config/crd/bases in $src"; return 1; }
  rm -rf "$manifests/k3s-manifests"; mkdir -p "$manifests/k3s-manifests"
  cp -r "$src/controlplane/config" "$manifests/k3s-manifests/k3s-control-plane"
  cp -r "$src/bootstrap/config" "$manifests/k3s-manifests/k3s-bootstrap"
  chmod -R u+w "$manifests/k3s-manifests"
}

build_one() {
  case "$1" in
    kustomize) build_kustomize ;;
    kubectl|kube-apiserver|kube-controller-manager) build_kube "$1" ;;
    etcd) build_etcd ;;
    temporal) build_temporal ;;
    clusterctl) build_capi clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl ;;
    capi-manager) build_capi capi-manager sigs.k8s.io/cluster-api ;;
    kubeadm-control-plane-manager) build_capi kubeadm-control-plane-manager sigs.k8s.io/cluster-api/controlplane/kubeadm ;;
    kubeadm-bootstrap-manager) build_capi kubeadm-bootstrap-manager sigs.k8s.io/cluster-api/bootstrap/kubeadm ;;
    capi-manifests) build_capi_manifests ;;
    k3s-control-plane-manager) build_k3s k3s-control-plane-manager controlplane ;;
    k3s-bootstrap-manager) build_k3s k3s-bootstrap-manager bootstrap ;;
    k3s-manifests) build_k3s_manifests ;;
  esac
}

total=${#components[@]} i=0
for c in "${components[@]}"; do
  i=$((i + 1))
  v="$(pinned "$c")"
  if built "$c"; then say "[$i/$total] $c $v: built"; continue; fi
  say "[$i/$total] $c $v: building ..."
  start=$SECONDS
  # The Go tool's own output goes to a log per component; its tail is shown when a build fails.
  if ! build_one "$c" > "$cache/logs/$c.log" 2>&1; then
    tail -n 30 "$cache/logs/$c.log" >&2
    say "[$i/$total] $c $v: build FAILED (whole log: $cache/logs/$c.log)"; exit 1
  fi
  echo "$v" > "$stamps/$c"
  say "[$i/$total] $c $v: built in $((SECONDS - start)) s"
done
say "ready in $bin"
