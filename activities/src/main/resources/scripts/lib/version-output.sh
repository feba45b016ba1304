# Prints what the version binary says about its version (hook: a distribution may ask differently).
version_output() {
  "$1" --version
}
