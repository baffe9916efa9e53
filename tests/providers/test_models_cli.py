"""`agentls models`: the models of each configured provider, with prices and capabilities."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run_models(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "models", *args],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_models_lists_each_configured_provider(env: dict[str, str], tmp_path: Path) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"providers": {
        "lab": {"type": "openai", "baseUrl": "http://gpu-box:8000/v1", "models": {
            "coder": {"id": "Qwen/Qwen3-Coder", "contextWindow": 131072, "images": True}}},
        "bedrock": {"type": "bedrock", "region": "eu-west-1"},
    }}))  # fmt: skip
    listed = run_models(env, "--json", "--cwd", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    rows = {r["model"]: r for r in json.loads(listed.stdout)}
    coder = rows["lab/coder"]
    assert (coder["apiModel"], coder["contextWindow"], coder["images"], coder["caching"]) == (
        "Qwen/Qwen3-Coder",
        131072,
        True,
        False,
    )
    assert rows["bedrock/claude-opus-5"]["apiModel"] == "global.anthropic.claude-opus-5"
    assert rows["bedrock/claude-sonnet-4-5"]["inputUsdPerMTok"] == 3.0
    assert rows["claude-opus-5-5"]["default"] and rows["claude-opus-5-5"]["thinking"]
    assert not any(m.startswith("vertex/") for m in rows)  # not configured: one line in text

    text = run_models(env, "--cwd", str(tmp_path)).stdout
    assert "lab: OpenAI-compatible, at http://gpu-box:8000/v1" in text
    assert "bedrock: Amazon Bedrock, region eu-west-1" in text
    assert "vertex/<model>: the Claude models above on Google Vertex AI" in text
