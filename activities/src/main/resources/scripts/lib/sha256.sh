# The sha256 of a file, in lower-case hex. OpenSSL's digest uses the CPU's SHA extensions where
# coreutils' sha256sum does not (4x faster on the project's machines, docs/benchmarks.md), and a node
# hashes each release several times; a host without openssl, or whose openssl answers anything but a
# digest, hashes with sha256sum as before.
sha256_of() {
  local sum=""
  if command -v openssl >/dev/null 2>&1; then
    sum="$(openssl dgst -sha256 -r "$1" 2>/dev/null)" || sum=""
    sum="${sum%% *}"
  fi
  if ! [[ "$sum" =~ ^[0-9a-f]{64}$ ]]; then
    sum="$(sha256sum "$1")"
    sum="${sum%% *}"
  fi
  echo "$sum"
}
