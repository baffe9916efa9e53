#!/usr/bin/env bash
# System packages the tests use beyond Python's: Neovim, for tests/e2e/test_neovim.py.
#
# Installs what is missing with apt-get when we are root on a Debian-like system. It never fails
# the build: when it cannot install, it says so, and pytest then reports the test as skipped
# with its reason (the Makefile runs pytest with -ra).
set -u

warn() { echo "ensure-system-deps: $*" >&2; }

if command -v nvim >/dev/null 2>&1; then
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    warn "nvim is not installed and we are not root: the Neovim end-to-end test will be SKIPPED" \
        "(install it with: sudo apt-get install -y neovim)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    warn "nvim is not installed and apt-get is unavailable: the Neovim end-to-end test will be" \
        "SKIPPED (install Neovim 0.7 or newer)"
    exit 0
fi

echo "ensure-system-deps: installing neovim with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if timeout 600 apt-get update -qq >/dev/null \
    && timeout 600 apt-get install -y -qq --no-install-recommends neovim >/dev/null; then
    echo "ensure-system-deps: $(nvim --version | head -n 1) installed" >&2
else
    warn "installing neovim failed: the Neovim end-to-end test will be SKIPPED"
fi
exit 0
