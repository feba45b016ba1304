#!/bin/bash
# inplace-step: install
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Puts each staged artifact in place: a copy next to the target, then an atomic rename over it.
# The staged file is kept, so running this again after a crash is safe.

staging_dir={{staging_dir}}

# inplace-include: sha256

# inplace-include: restart-state
# inplace-include: safe-dir
# inplace-include: install-artifacts
