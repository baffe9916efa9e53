"""Serve a scripted Messages API in its own process: ``python -m messages_api --port 0 --script
replies.json [--record log.jsonl]`` (from the repository root) prints ``READY <url>`` once listening
and serves until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from messages_api.replies import ReplySpec
from messages_api.scripts import load_script
from messages_api.server import MessagesAPIServer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m messages_api",
        description="Serve a scripted Anthropic Messages API; prints 'READY <url>' when listening.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: list of replies or {replies, default}")
    parser.add_argument("--record", help="append each request as a JSON line to this file")
    parser.add_argument(
        "--strict-auth", action="store_true", help="require x-api-key or Authorization: Bearer"
    )
    parser.add_argument("--api-key", help="with --strict-auth: the only accepted key")
    parser.add_argument("--no-validate", action="store_true", help="accept invalid requests")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    parser.add_argument(
        "--simulate-cache", action="store_true", help="report cache reads/writes in usage"
    )
    args = parser.parse_args(argv)

    replies: list[ReplySpec] = []
    default: ReplySpec | None = None
    if args.script:
        replies, default = load_script(args.script)
    srv = MessagesAPIServer(
        replies,
        default=default,
        validate=not args.no_validate,
        strict_auth=args.strict_auth,
        api_key=args.api_key,
        host=args.host,
        port=args.port,
        record_path=args.record,
        verbose=args.verbose,
        simulate_cache=args.simulate_cache,
    )
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    srv.start()
    try:
        print(f"READY {srv.url}", flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
