# Sourced by the shell tests of the uslab CLI: strict mode, $O (the build
# output), $U (the uslab binary), a scratch folder $T removed on exit, and
# fail MESSAGE.
set -eu
O=${O:-build}
U=$O/uslab
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
