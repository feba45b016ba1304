#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Puts each staged artifact in place: a copy next to the target, then an atomic rename over it.
# The staged file is kept, so running this again after a crash is safe. The running kubelet keeps
# its old binary until the restart step; kubeadm upgrade runs before that with the new kubeadm.
# Then imports every image archive into containerd's k8s.io namespace, so the upgrade needs no
# registry (air-gapped). ctr import is idempotent: a re-run imports again at no harm.

staging_dir={{staging_dir}}

# inplace-include: sha256

# inplace-include: restart-state
# inplace-include: safe-dir
# inplace-include: install-artifacts

# inplace-include: import-images
