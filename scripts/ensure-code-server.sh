#!/usr/bin/env bash
# code-server (VS Code in the browser) for the extension's end-to-end test, client-vscode/e2e/.
#
#   scripts/ensure-code-server.sh      prints the code-server executable as its last line of stdout
#
# Exit status: 0 ready; 3 cannot be set up here (the reason is on stderr: the test skips);
# anything else: the set-up failed.
#
# Installs offline, from the npm registry and Debian's packages only (no GitHub downloads):
# - code-server's own install scripts would fetch ripgrep from GitHub, so it is installed with
#   --ignore-scripts and Debian's `rg` is put where @vscode/ripgrep expects its binary before the
#   native modules are rebuilt; argon2's prebuilt download fails and it builds from source;
#   node-pty's install runs `npx node-gyp`, which needs npm_config_yes=true.
# - The install (about 300 MB, a minute cold, of which the native rebuild is 25 s) is cached in
#   $AGENTLS_E2E_CACHE (default ~/.cache/agentls-e2e)/code-server-$VERSION behind a marker file
#   written last, named after Node's ABI: a run that finds the marker does nothing more; a
#   directory without it (an interrupted install) is removed and installed again.
# - Debian packages (installed with apt-get when missing and we are root):
#   at run time chromium; for the install ripgrep, a C/C++ toolchain and the headers of the native
#   modules (kerberos, native-keymap, keytar).
set -euo pipefail

VERSION=4.100.3 # the newest line whose engines allow Node 20
CACHE=${AGENTLS_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-e2e}
DIR=$CACHE/code-server-$VERSION
BIN=$DIR/node_modules/.bin/code-server

log() { echo "ensure-code-server: $*" >&2; }
cannot() {
    log "$* (install it as root, or see scripts/ensure-code-server.sh)"
    exit 3
}

command -v node >/dev/null 2>&1 || cannot "node is not installed"
command -v npm >/dev/null 2>&1 || cannot "npm is not installed"
ABI=$(node -p process.versions.modules)
MARKER=$DIR/.agentls-installed-node$ABI

# ---- Debian packages ------------------------------------------------------------------------
RUNTIME_PACKAGES=(chromium)
BUILD_PACKAGES=(ripgrep build-essential python3 pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)

missing_packages() {
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
            || echo "$package"
    done
}

ensure_packages() {
    local missing
    if ! command -v dpkg-query >/dev/null 2>&1; then
        # Not Debian-like: look for the programs; headers we cannot check (the build will say).
        command -v chromium >/dev/null 2>&1 || cannot "chromium is not installed"
        [ -f "$MARKER" ] || command -v rg >/dev/null 2>&1 || cannot "ripgrep (rg) is not installed"
        return
    fi
    mapfile -t missing < <(missing_packages "$@")
    [ ${#missing[@]} -eq 0 ] && return
    [ "$(id -u)" = 0 ] || cannot "missing Debian packages ${missing[*]} and we are not root"
    command -v apt-get >/dev/null 2>&1 || cannot "missing packages ${missing[*]} and no apt-get"
    log "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -qq >/dev/null \
        && timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || cannot "apt-get install ${missing[*]} failed"
}

if [ -f "$MARKER" ] && [ -x "$BIN" ]; then
    ensure_packages "${RUNTIME_PACKAGES[@]}"
    log "code-server $VERSION is installed in $DIR"
    echo "$BIN"
    exit 0
fi
ensure_packages "${RUNTIME_PACKAGES[@]}" "${BUILD_PACKAGES[@]}"

# ---- code-server ----------------------------------------------------------------------------
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 900 9 || { log "another install holds $CACHE/.lock"; exit 1; }
if [ -f "$MARKER" ] && [ -x "$BIN" ]; then # installed by whoever held the lock
    echo "$BIN"
    exit 0
fi

export npm_config_yes=true npm_config_audit=false npm_config_fund=false \
    npm_config_update_notifier=false npm_config_loglevel=error npm_config_progress=false
SECONDS=0
step() { log "[${SECONDS}s] $*"; }

case "$DIR" in */agentls-e2e/code-server-"$VERSION" | */code-server-"$VERSION") ;; *) exit 1 ;; esac
rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
echo '{"name": "agentls-e2e-code-server", "private": true}' >package.json
step "npm install code-server@$VERSION (without its install scripts)"
timeout 900 npm install --ignore-scripts --no-save "code-server@$VERSION" >&2
step "argon2 (built from source: its prebuilt download fails offline)"
timeout 600 npm rebuild argon2 >&2

VS=$DIR/node_modules/code-server/lib/vscode
cd "$VS"
step "VS Code's own dependencies"
timeout 900 npm install --omit=dev --ignore-scripts >&2
# @vscode/ripgrep's postinstall downloads rg from GitHub unless bin/rg is there already.
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
step "native modules (node-pty, spdlog, kerberos, ...)"
timeout 900 npm rebuild >&2
# What code-server's postinstall.sh does besides installing.
rm -rf node_modules.asar && ln -s node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh
step "the built-in extensions' dependencies"
(cd extensions && timeout 600 npm install --omit=dev >&2)

"$BIN" --version >/dev/null || { log "the installed code-server does not start"; exit 1; }
echo "code-server $VERSION, node $(node --version) (ABI $ABI), installed $(date -u +%FT%TZ)" >"$MARKER"
step "code-server $VERSION installed in $DIR"
echo "$BIN"
