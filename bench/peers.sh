#!/bin/sh
# bench/peers.sh: agentls, Claude Code and opencode side by side on the CLI benchmarks' scenarios
# (steps50, stream), against the same local Messages-API server (see bench/peers.py).
#
#   bench/peers.sh                      # both scenarios, medians of 5 rounds
#   bench/peers.sh --runs 3 --scenarios steps50
#
# Installs the two peers from the npm registry (pinned versions; override with
# CLAUDE_CODE_VERSION / OPENCODE_VERSION) into a cache, ~/.cache/agentls-bench/peers
# (AGENTLS_PEERS_DIR), once: after that nothing leaves the machine. The agents get a fresh home
# directory each run and talk to 127.0.0.1 only (Claude Code's nonessential traffic and
# opencode's model list fetch, updates and LSP downloads turned off).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
peers=${AGENTLS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentls-bench/peers}
claude_version=${CLAUDE_CODE_VERSION:-2.1.197}
opencode_version=${OPENCODE_VERSION:-1.18.33}
python=${PYTHON:-$here/.venv/bin/python}

installed() {  # installed NAME VERSION
    [ -f "$peers/node_modules/$1/package.json" ] &&
        grep -q "\"version\": \"$2\"" "$peers/node_modules/$1/package.json"
}

if ! installed @anthropic-ai/claude-code "$claude_version" ||
    ! installed opencode-ai "$opencode_version"; then
    command -v npm >/dev/null || { echo "peers.sh: npm is needed to install the peers" >&2; exit 1; }
    mkdir -p "$peers"
    echo "peers.sh: installing @anthropic-ai/claude-code@$claude_version and" \
        "opencode-ai@$opencode_version into $peers" >&2
    # The native binaries come as the packages' optional per-platform dependencies.
    npm install --prefix "$peers" --no-audit --no-fund --no-save --include=optional \
        "@anthropic-ai/claude-code@$claude_version" "opencode-ai@$opencode_version" >&2
fi

cd "$here"
exec "$python" -m bench.peers --peers "$peers" "$@"
