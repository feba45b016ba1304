#!/usr/bin/env bash
# What `mvn -B verify` (the README's test command) needs on the machine, checked in its first
# seconds: every missing prerequisite is listed in one message with the command that installs it,
# instead of a failure many minutes into the build. Run by Maven's validate phase (root pom).
set -uo pipefail
missing=()
need() { # description, install hint
  missing+=("  - $1: $2")
}

java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[ -n "$java_major" ] && [ "${java_major%%.*}" -ge 17 ] 2>/dev/null || need "Java 17 or newer (found: ${java_major:-none})" "apt-get install -y openjdk-17-jdk-headless"
command -v go >/dev/null 2>&1 || need "Go 1.24 or newer (builds the test bed's real components, docs/testbed.md)" "install Go from https://go.dev/doc/install"
if command -v go >/dev/null 2>&1; then
  gov=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  major=${gov%%.*}; rest=${gov#*.}; minor=${rest%%.*}
  { [ "${major:-0}" -gt 1 ] || { [ "${major:-0}" -eq 1 ] && [ "${minor:-0}" -ge 24 ]; }; } \
    || need "Go 1.24 or newer (found go$gov)" "install a newer Go from https://go.dev/doc/install"
fi
[ -x /usr/sbin/sshd ] || need "OpenSSH's sshd at /usr/sbin/sshd (the host tests run real sshd processes)" "apt-get install -y openssh-server"
command -v jq >/dev/null 2>&1 || need "jq (docs/runbook.md's reset command reads the CLI's JSON with it; RunbookCommandsIT runs it)" "apt-get install -y jq"
[ -x /usr/bin/chromium ] || need "Debian's Chromium at /usr/bin/chromium (TemporalUiIT drives the Temporal Web UI in it)" "apt-get install -y chromium"
for tool in ssh-keygen openssl sha256sum tar; do
  command -v "$tool" >/dev/null 2>&1 || need "$tool" "apt-get install -y $( [ "$tool" = ssh-keygen ] && echo openssh-client || { [ "$tool" = sha256sum ] && echo coreutils || echo "$tool"; })"
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "inplace: the tests need what this machine lacks:" >&2
  printf '%s\n' "${missing[@]}" >&2
  echo "(.ci/run installs these on Debian; docs/testbed.md lists every prerequisite)" >&2
  exit 1
fi
