"""`agentls models [--cwd DIR] [--json]`: the models of each provider (Anthropic's API, the
`providers` setting's, and the built-in ones) with their figures and what each supports."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agentls.model.listing import rows
from agentls.model.providers import BUILTIN_PROVIDERS, ProviderSettings

EXIT_OK = 0
EXIT_USAGE = 2

_KINDS = {
    "anthropic": "Anthropic API",
    "bedrock": "Amazon Bedrock",
    "vertex": "Google Vertex AI",
    "openai": "OpenAI-compatible",
}
_OTHER = "32,768 context, text only, free: describe it in the provider's `models`"
# Built-in providers nobody configured: one line each instead of their table.
_UNCONFIGURED = {
    "local": "local/<model>: a model of Ollama at http://localhost:11434/v1 (configure `providers` "
    "for another server, its key and its models' figures)",
    "bedrock": "bedrock/<model>: the Claude models above on Amazon Bedrock "
    "(pip install 'agentls[bedrock]'; region from AWS_REGION)",
    "vertex": "vertex/<model>: the Claude models above on Google Vertex AI "
    "(pip install 'agentls[vertex]'; CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID)",
}


def _where(name: str, settings: ProviderSettings) -> str:
    bits = [_KINDS[settings.type]]
    if settings.base_url:
        bits.append(f"at {settings.base_url}")
    if settings.region:
        bits.append(f"region {settings.region}")
    if settings.project:
        bits.append(f"project {settings.project}")
    return f"{name}: {', '.join(bits)}"


def _print_table(table: list[dict[str, Any]], providers: dict[str, ProviderSettings]) -> None:
    width = max([len(r["model"]) for r in table] + [22]) + 2
    header = (
        f"  {'model':<{width}}{'context':>10}{'max out':>9}{'$/MTok in':>11}{'$/MTok out':>12}"
        "  supports"
    )
    shown = []
    for name in dict.fromkeys(r["provider"] for r in table):
        settings = providers.get(name) or BUILTIN_PROVIDERS[name]
        print(_where(name, settings))
        print(header)
        for r in (r for r in table if r["provider"] == name):
            supports = ", ".join(k for k in ("images", "thinking", "caching") if r[k]) or "text"
            mark = " (default)" if r["default"] else ""
            api = f"  [{r['apiModel']}]" if r["apiModel"] != r["model"].partition("/")[2] else ""
            print(
                f"  {r['model']:<{width}}{r['contextWindow']:>10,}{r['maxOutput']:>9,}"
                f"{r['inputUsdPerMTok']:>11.2f}{r['outputUsdPerMTok']:>12.2f}  {supports}"
                f"{mark}{api if r['provider'] != 'anthropic' else ''}"
            )
        shown.append(name)
        if settings.type == "openai":
            print(f"  {name}/<model>: any other model of the server ({_OTHER})")
        print()
    for name, settings in providers.items():
        if name not in shown and settings.type == "openai":
            print(_where(name, settings))
            print(f"  {name}/<model>: any model of the server ({_OTHER})\n")
    for name, line in _UNCONFIGURED.items():
        if name not in providers:
            print(line)
    print("scripted:<scenario>: the built-in offline model (no API key, no cost)")
    print("Prices in USD per million tokens; cache writes cost 1.25x the input price, reads 0.1x.")


def models_command(args: argparse.Namespace) -> int:
    from agentls.config import load_settings

    root = Path(args.cwd or os.getcwd())
    try:
        settings = load_settings(root if root.is_dir() else None)
    except ValueError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    providers = dict(settings.providers or {})
    table = rows(providers)
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        _print_table(table, providers)
    return EXIT_OK
