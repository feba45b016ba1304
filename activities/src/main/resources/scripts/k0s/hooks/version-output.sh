# k0s prints its release (v1.31.2+k0s.0) with `k0s version`.
version_output() {
  "$1" version
}
