sha256_of() {
  local sum
  sum="$(sha256sum "$1")"
  echo "${sum%% *}"
}
