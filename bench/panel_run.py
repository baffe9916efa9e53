"""Runs bench/panel.mjs (the VS Code panel's real webview bundle in headless Chromium, through the
extension's playwright-core) for panel_mentions.py and panel_transcript.py: the bundle is built
first (client-vscode/scripts/build.mjs), so the figures are of the code in the tree."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from bench.common import REPO, log, quiet

CLIENT = REPO / "client-vscode"
SCRIPT = Path(__file__).with_name("panel.mjs")


def run_panel(mode: str, *args: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed: the panel benchmarks drive the webview with it")
    if not (CLIENT / "node_modules" / "playwright-core").exists():
        raise RuntimeError("client-vscode/node_modules is missing: run `npm ci` in client-vscode")
    subprocess.run([node, "scripts/build.mjs"], cwd=CLIENT, check=True, capture_output=True)
    quiet()
    log(f"node bench/panel.mjs {mode} {' '.join(args)}")
    done = subprocess.run(
        [node, str(SCRIPT), mode, *args], cwd=REPO, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench/panel.mjs {mode} failed:\n{done.stderr[-4000:]}")
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if data.get("errors"):
        raise RuntimeError(f"the panel logged errors: {data['errors'][:3]}")
    return data
