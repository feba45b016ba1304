# name archive_path
import_images() {
  if ! command -v ctr >/dev/null 2>&1; then
    echo "artifact $1: ctr (containerd) is not on the PATH, cannot import $2" >&2
    exit 1
  fi
  # ctr's progress output goes to stderr: stdout carries only the key=value report.
  ctr -n k8s.io images import "$root$2" >&2
  echo "imported=$1"
}
import_images {{images}}
