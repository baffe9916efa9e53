"""Writes schemas/ (JSON Schema of every method, command and the event union) and
docs/protocol.md from the protocol's pydantic models: `python -m agentls.protocol.schema [--check]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from agentls.events import AgentEvent
from agentls.protocol.models import (
    CLIENT_NOTIFICATIONS,
    COMMANDS,
    PROTOCOL_VERSION,
    REQUESTS,
    SERVER_QUESTIONS,
    SERVER_REQUESTS,
    AgentInitOptions,
    ClientAgentCapabilities,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
REF = "#/$defs/{model}"


def _pair_schema(
    title: str, description: str, params: type[BaseModel], result: type[BaseModel] | None
) -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = [(params, "validation")]
    if result is not None:
        models.append((result, "serialization"))
    keys, defs = models_json_schema(models, by_alias=True, ref_template=REF)
    properties: dict[str, Any] = {"params": keys[(params, "validation")]}
    required = ["params"]
    if result is not None:
        properties["result"] = keys[(result, "serialization")]
        required.append("result")
    return {
        "$schema": DRAFT,
        "title": title,
        "description": description,
        "type": "object",
        "properties": properties,
        "required": required,
        "$defs": defs.get("$defs", {}),
    }


def _event_schema() -> dict[str, Any]:
    schema = TypeAdapter(AgentEvent).json_schema(
        by_alias=True, ref_template=REF, mode="serialization"
    )
    defs = schema.pop("$defs", {})
    return {
        "$schema": DRAFT,
        "title": "agent/event",
        "description": "Server -> client notification: one event of a session's turn.",
        **schema,
        "$defs": defs,
    }


def _capabilities_schema() -> dict[str, Any]:
    return _pair_schema(
        "initialize",
        "initializationOptions.agent (params) and capabilities.experimental.agent of the client "
        f"(result slot); the server advertises experimental.agent.protocolVersion = {PROTOCOL_VERSION}.",
        AgentInitOptions,
        ClientAgentCapabilities,
    )


def build() -> dict[str, str]:
    """Relative path -> file text of everything generated."""
    files: dict[str, dict[str, Any]] = {}
    for method, (params, result) in REQUESTS.items():
        files[f"schemas/requests/{method.replace('/', '.')}.json"] = _pair_schema(
            method, f"Client -> server request {method}.", params, result
        )
    for command, (params, result) in COMMANDS.items():
        files[f"schemas/commands/{command}.json"] = _pair_schema(
            command,
            f"workspace/executeCommand {command}; `arguments` is [params].",
            params,
            result,
        )
    for method, params in CLIENT_NOTIFICATIONS.items():
        files[f"schemas/notifications/{method.replace('/', '.')}.json"] = _pair_schema(
            method, f"Client -> server notification {method}.", params, None
        )
    for method, params in SERVER_REQUESTS.items():
        files[f"schemas/server-requests/{method.replace('/', '.')}.json"] = _pair_schema(
            method,
            f"Server -> client request {method}; the result is a plain LSP result (see params).",
            params,
            None,
        )
    for method, (params, result) in SERVER_QUESTIONS.items():
        files[f"schemas/server-requests/{method.replace('/', '.')}.json"] = _pair_schema(
            method, f"Server -> client request {method}.", params, result
        )
    files["schemas/notifications/agent.event.json"] = _event_schema()
    files["schemas/initialize.json"] = _capabilities_schema()
    out = {path: json.dumps(body, indent=2, sort_keys=True) + "\n" for path, body in files.items()}
    out["docs/protocol.md"] = render_markdown(files)
    return out


def _type_of(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " | ".join(_type_of(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"{_type_of(prop.get('items', {}))}[]"
    return str(kind)


def _table(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties", {})
    if not props:
        return ["(no fields)", ""]
    required = set(schema.get("required", []))
    lines = ["| field | type | required |", "|---|---|---|"]
    for name, prop in props.items():
        kind = _type_of(prop).replace("|", "\\|")
        lines.append(f"| `{name}` | `{kind}` | {'yes' if name in required else 'no'} |")
    lines.append("")
    return lines


def render_markdown(files: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# The agentls protocol",
        "",
        "Generated from `server/agentls/protocol/models.py` and `server/agentls/events.py` by",
        "`make schemas`; do not edit by hand. JSON Schema for each entry is in `schemas/`.",
        "",
        f"Protocol version {PROTOCOL_VERSION}. Field names are camelCase on the wire. Invalid params",
        "answer JSON-RPC error -32602 with a message naming the field; an unknown sessionId too.",
        "",
    ]
    for path, schema in files.items():
        lines.append(f"## `{schema['title']}`")
        lines.append("")
        lines.append(f"{schema['description']} Schema: `{path}`.")
        lines.append("")
        defs = schema.get("$defs", {})
        if "properties" in schema and "params" in schema["properties"]:
            for slot in ("params", "result"):
                ref = schema["properties"].get(slot)
                if ref is None:
                    continue
                name = _type_of(ref)
                lines.append(f"**{slot}** `{name}`")
                lines.append("")
                doc = defs.get(name, {}).get("description")
                if doc:
                    lines.append(" ".join(str(doc).split()))
                    lines.append("")
                lines.extend(_table(defs.get(name, {})))
        else:
            lines.append("One of these, by `type`:")
            lines.append("")
            for name in sorted(defs):
                body = defs[name]
                event_type = body.get("properties", {}).get("type", {}).get("const") or body.get(
                    "properties", {}
                ).get("type", {}).get("default")
                label = f"`{event_type}` ({name})" if event_type else name
                lines.append(f"**{label}**")
                lines.append("")
                lines.extend(_table(body))
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=".", help="repository root")
    parser.add_argument("--check", action="store_true", help="fail if the files on disk are stale")
    args = parser.parse_args(argv)
    root = Path(args.root)
    generated = build()
    stale = []
    for rel, text in generated.items():
        target = root / rel
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            stale.append(rel)
            if not args.check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    known = set(generated)
    extra = (
        [
            p.relative_to(root).as_posix()
            for p in (root / "schemas").rglob("*.json")
            if p.relative_to(root).as_posix() not in known
        ]
        if (root / "schemas").exists()
        else []
    )
    if args.check:
        if stale or extra:
            print("schemas/ or docs/protocol.md is stale; run `make schemas`:", file=sys.stderr)
            for rel in stale + extra:
                print(f"  {rel}", file=sys.stderr)
            return 1
        return 0
    for rel in extra:
        (root / rel).unlink()
    print(f"wrote {len(stale)} file(s), removed {len(extra)}; {len(generated)} generated in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
