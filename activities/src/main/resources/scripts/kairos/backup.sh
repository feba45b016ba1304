#!/bin/bash
# inplace-step: backup
set -eu
root="${INPLACE_HOST_ROOT:-}"
# Nothing is copied on a Kairos host: kairos-agent upgrade keeps the image the host runs as the
# passive (fallback) image. That holds only when the host runs its active entry: from the passive or
# recovery entry, an upgrade would overwrite the fallback with the active image, so it is refused.

# inplace-include: kairos-plan

booted="$(booted_entry)"
if [ "$booted" != active_boot ]; then
  echo "the host runs its ${booted:-unknown} boot entry, not active_boot: kairos-agent upgrade would replace" \
    "the fallback image with the active one; boot the active entry (or reinstall) before upgrading" >&2
  exit 1
fi
echo "backed_up=the running image (kairos-agent upgrade keeps it as the passive image)"
