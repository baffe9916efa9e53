#!/usr/bin/env bash
# System packages the tests use beyond Python's and npm's:
#   nvim      (Debian: neovim)    tests/e2e/test_neovim.py
#   chromium  (Debian: chromium)  client-vscode/test/browser (the VS Code panel in a real browser)
#   bwrap     (Debian: bubblewrap) tests/security/test_sandbox.py and the other bash sandbox tests
#
#   scripts/ensure-system-deps.sh [nvim] [chromium] [bwrap]   (no argument: all of them)
#
# Installs what is missing with apt-get when we are root on a Debian-like system. It never fails
# the build: when it cannot install, it says so, and the test that needs the program reports
# itself as skipped with its reason.
set -u

warn() { echo "ensure-system-deps: $*" >&2; }

declare -A PACKAGE=([nvim]=neovim [chromium]=chromium [bwrap]=bubblewrap)
declare -A NEEDED_BY=(
    [nvim]="the Neovim end-to-end test"
    [chromium]="the VS Code panel's browser test"
    [bwrap]="the bash sandbox tests"
)

wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(nvim chromium bwrap)

missing=()
for program in "${wanted[@]}"; do
    if [ -z "${PACKAGE[$program]:-}" ]; then
        warn "unknown program $program (known: ${!PACKAGE[*]})"
        continue
    fi
    command -v "$program" >/dev/null 2>&1 || missing+=("$program")
done
[ ${#missing[@]} -eq 0 ] && exit 0

skipped() {
    for program in "${missing[@]}"; do
        warn "$program is not installed$1: ${NEEDED_BY[$program]} will be SKIPPED" \
            "(install it with: sudo apt-get install -y ${PACKAGE[$program]})"
    done
    exit 0
}

[ "$(id -u)" != 0 ] && skipped " and we are not root"
command -v apt-get >/dev/null 2>&1 || skipped " and apt-get is unavailable"

packages=()
for program in "${missing[@]}"; do packages+=("${PACKAGE[$program]}"); done
echo "ensure-system-deps: installing ${packages[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if timeout 600 apt-get update -qq >/dev/null \
    && timeout 900 apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; then
    for program in "${missing[@]}"; do
        echo "ensure-system-deps: $("$program" --version 2>/dev/null | head -n 1) installed" >&2
    done
else
    skipped " (installing ${packages[*]} failed)"
fi
exit 0
