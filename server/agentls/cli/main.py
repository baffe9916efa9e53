"""The `agentls` command: `run` a prompt headless, list `sessions`."""

from __future__ import annotations

# Only what every command needs: each command imports what it uses when it runs.
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CANCELLED = 130


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from agentls.cli.review import add_review_commands
    from agentls.cli.rewind import add_rewind_command
    from agentls.cli.session_admin import add_session_commands

    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent that lives in a language server."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="answer one prompt in the terminal, streaming the answer")
    run.add_argument("prompt", nargs="+", help="what to do")
    run.add_argument("--cwd", default=None, help="workspace root (default: the current directory)")
    run.add_argument(
        "--model", default=None, help="model id, or scripted:<scenario> for the offline model"
    )
    run.add_argument("--session", default=None, help="continue this session id")
    run.add_argument("--yes", action="store_true", help="allow every tool call that would ask")
    run.add_argument("--json", action="store_true", help="print events as JSON lines")
    run.add_argument(
        "--plan",
        action="store_true",
        help="plan mode: nothing is changed until you approve the plan (exit_plan)",
    )
    run.add_argument("--image", action="append", default=[], help="attach an image (repeatable)")
    run.add_argument(
        "--max-steps", type=int, default=None, help="step limit for the turn (default 100)"
    )

    sessions = sub.add_parser("sessions", help="list sessions")
    sessions.add_argument("--json", action="store_true", help="print JSON")
    sessions.add_argument("--cwd", default=None, help="only sessions of this workspace")
    sessions.add_argument("--limit", type=int, default=50)
    sessions.add_argument("--search", default=None, help="only those whose title or text has it")
    add_session_commands(sub)  # export, rename, delete, fork
    add_review_commands(sub, run)  # review, run --review
    add_rewind_command(sub)

    permissions = sub.add_parser(
        "permissions",
        help='list the grants given with "always, in this project", or revoke one',
    )
    permissions.add_argument(
        "--cwd", default=None, help="the workspace root (default: the current directory)"
    )
    permissions.add_argument("--json", action="store_true", help="print JSON")
    permissions.add_argument(
        "--revoke", type=int, default=None, metavar="N", help="remove grant number N of the list"
    )

    trust = sub.add_parser(
        "trust",
        help="trust a workspace's .agentls/config.json (its exact content), or revoke or list",
    )
    trust.add_argument("dir", nargs="?", default=None, help="the workspace (default: here)")
    trust_mode = trust.add_mutually_exclusive_group()
    trust_mode.add_argument("--revoke", action="store_true", help="take the trust back")
    trust_mode.add_argument("--list", action="store_true", help="list the trusted files")

    mcp = sub.add_parser("mcp", help="the MCP servers: `agentls mcp list` (state and tools)")
    mcp.add_argument("action", choices=["list"], help="list: start each server, show its tools")
    mcp.add_argument("--cwd", default=None, help="the workspace (default: the current directory)")
    mcp.add_argument("--json", action="store_true", help="print JSON")

    models = sub.add_parser(
        "models", help="the models of each provider: prices, context window, what each supports"
    )
    models.add_argument(
        "--cwd", default=None, help="the workspace (default: the current directory)"
    )
    models.add_argument("--json", action="store_true", help="print JSON")
    commands = sub.add_parser("commands", help='the commands a prompt "/NAME args" runs')
    commands.add_argument("--cwd", default=None, help="the workspace (default: here)")
    commands.add_argument("--json", action="store_true", help="print JSON")
    sub.add_parser("serve", help="speak LSP on stdin/stdout (what an editor starts)")
    sub.add_parser(
        "acp", help="speak the Agent Client Protocol on stdin/stdout (Zed and other ACP editors)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    # Before any tool can run: see agentls.environ_scrub.
    from agentls.environ_scrub import scrub_initial_environment

    scrub_initial_environment()
    if (sys.argv[1:] if argv is None else argv) == ["serve"]:
        return _serve()
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return _serve()
    if args.command == "acp":
        _harden()
        from agentls.acp.server import serve as serve_acp

        return serve_acp()
    return _command(args)


def _command(args: argparse.Namespace) -> int:
    """Run the command of the parsed arguments (every one but serve)."""
    if args.command == "models":
        from agentls.cli.models import models_command

        return models_command(args)
    if args.command == "trust":
        from agentls.cli.trust import trust_command

        return trust_command(args)
    import asyncio

    from agentls.session import StoreError

    try:
        if getattr(args, "handler", None):  # a command's own (cli/review.py: review)
            return int(asyncio.run(args.handler(args)))
        if args.command == "run":
            _harden()
            return asyncio.run(_run(args))
        if args.command == "sessions":
            return asyncio.run(_sessions(args))
        if args.command in ("export", "rename", "delete", "fork"):
            from agentls.cli.session_admin import session_command

            return asyncio.run(session_command(args))
        if args.command == "permissions":
            return asyncio.run(_permissions(args))
        if args.command == "mcp":
            from agentls.cli.mcp import mcp_command

            return asyncio.run(mcp_command(args))
        if args.command == "commands":
            from agentls.cli.commands import commands_command

            return asyncio.run(commands_command(args))
    except StoreError as exc:
        # The database cannot be used (not a database, damaged, read-only, a full disk, locked,
        # no data directory), or the session runs a turn in another process: one line, no
        # traceback.
        print(f"agentls: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_USAGE


def _harden() -> None:
    # `run` and `serve` only, after the environment scrub (it writes /proc/self/mem, which a
    # non-dumpable process cannot open): see agentls.hardening.
    from agentls.environ_scrub import take_credentials
    from agentls.hardening import harden_server

    take_credentials()
    harden_server()


def _serve() -> int:
    _harden()
    from agentls.lsp.server import serve

    return serve()


async def _open_agent(root: str) -> Any:
    """An Agent for a command that only reads or edits the store (no turn runs)."""
    from agentls.config import Settings
    from agentls.session import Agent

    return await Agent.open(settings=Settings(), root=root, watch_instructions=False)


async def _sessions(args: argparse.Namespace) -> int:
    import json
    import os

    agent = await _open_agent(os.getcwd())
    try:
        records = await agent.search_sessions(args.search or "", limit=args.limit, cwd=args.cwd)
    finally:
        await agent.aclose()
    if args.json:
        print(json.dumps([r.model_dump(mode="json", by_alias=True) for r in records], indent=2))
        return EXIT_OK
    if not records:
        print("No sessions yet.")
        return EXIT_OK
    from datetime import datetime

    from agentls.cli.terminal import visible  # a title renamed over LSP may hold escapes

    print(  # input: uncached input tokens; cache r/w: read from / written to the prompt cache
        f"{'session':<32} {'updated':<16} {'input':>10} {'cache r/w':>21} {'output':>9} "
        f"{'cost':>10}  title  (workspace)"
    )
    for r in records:
        when = datetime.fromtimestamp(r.updated_at / 1000).strftime("%Y-%m-%d %H:%M")
        u = r.usage
        cache = f"{u.cache_read_tokens:,}/{u.cache_write_tokens:,}"
        cost = f"${u.cost_usd:,.4f}"
        print(
            f"{r.id:<32} {when:<16} {u.input_tokens:>10,} {cache:>21} {u.output_tokens:>9,} "
            f"{cost:>10}  {visible(r.title)}  ({visible(r.cwd)})"
        )
    return EXIT_OK


async def _permissions(args: argparse.Namespace) -> int:
    """List the project grants of a workspace root, numbered, or revoke one by its number."""
    import json
    import os
    from datetime import datetime

    root = os.path.realpath(args.cwd or os.getcwd())
    agent = await _open_agent(os.getcwd())
    try:
        if args.revoke is not None:
            grants = await agent.list_project_grants(root)
            revoked = await agent.revoke_project_grant(args.revoke, root)
            if revoked is None:
                have = (
                    f"there are {len(grants)}, numbered 1 to {len(grants)}"
                    if grants
                    else "there are none"
                )
                print(
                    f"agentls: no project grant number {args.revoke} for {root} ({have}; "
                    "`agentls permissions` lists them)",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            print(f"Revoked {args.revoke}: {revoked.label} ({root})")
            return EXIT_OK
        grants = await agent.list_project_grants(root)
    finally:
        await agent.aclose()
    if args.json:
        listed = [
            {
                "number": number,
                "root": g.root,
                "tool": g.tool,
                "pattern": g.pattern,
                "action": g.action,
                "exact": g.exact,
                "label": g.label,
                "createdAt": g.created_at,
            }
            for number, g in enumerate(grants, 1)
        ]
        print(json.dumps(listed, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not grants:
        print(f"No project grants for {root}.")
        return EXIT_OK
    print(f"Project grants for {root} (`agentls permissions --revoke N` removes one):")
    for number, g in enumerate(grants, 1):
        when = datetime.fromtimestamp(g.created_at / 1000).strftime("%Y-%m-%d %H:%M")
        print(f"{number:>3}. {g.label}  (since {when})")
    return EXIT_OK


class TerminalPrinter:
    """Renders events for a person: streamed text, one line per tool call, errors."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.at_line_start = True
        self._titles: dict[str, str] = {}

    def _newline(self) -> None:
        if not self.at_line_start:
            self.out.write("\n")
            self.at_line_start = True

    def __call__(self, event: Any) -> None:
        kind = event.type
        if event.parent_session_id is not None:
            self._sub_agent(event)
        elif kind == "text-delta":
            self.out.write(event.delta)
            self.at_line_start = event.delta.endswith("\n")
        elif kind == "tool-result":
            self._newline()
            lines = event.output.splitlines() or [""]
            first = lines[0][:120]
            more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
            mark = "x" if event.is_error else "+"
            self.out.write(
                f"[{mark}] {self._titles.pop(event.call_id, event.tool)}: {first}{more}\n"
            )
        elif kind == "tool-call":
            self._titles[event.call_id] = event.title
        elif kind == "retry":
            self._newline()
            self.out.write(
                f"[retry {event.attempt}] {event.reason}; again in {event.delay_ms} ms\n"
            )
        elif kind == "compaction":
            self._newline()
            if event.status == "started":
                self.out.write(
                    f"[compacting] context {event.context_tokens:,} of "
                    f"{event.context_window:,} tokens: summarizing the older history\n"
                )
            elif event.status == "done":
                self.out.write(f"[compacted] {event.summarized_messages} messages summarized\n")
            else:
                self.out.write(f"[compaction failed] {event.error}; going on without it\n")
        elif kind == "todo":
            self._newline()
            done = sum(1 for t in event.todos if t.status == "completed")
            marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
            self.out.write(f"Todo ({done}/{len(event.todos)} done):\n")
            for todo in event.todos:
                self.out.write(f"  {marks[todo.status]} {todo.content}\n")
        elif kind == "mode":
            self._newline()
            self.out.write(f"[mode] {event.mode}\n")
        elif kind == "error":
            self._newline()
            self.out.write(f"[error] {event.message}\n")
        elif kind == "turn-end":
            self._newline()
        self.out.flush()

    def _sub_agent(self, event: Any) -> None:
        """A sub-agent's steps (the task tool's), indented under its task: its start, each tool
        call's result, its errors; its text is in the task's result."""
        kind = event.type
        if kind == "tool-call":
            self._titles[event.call_id] = event.title
            return
        if kind == "turn-start":
            line = f"[{event.agent}] {' '.join(event.prompt.split())[:100]}"
        elif kind == "tool-result":
            first = (event.output.splitlines() or [""])[0][:100]
            mark = "x" if event.is_error else "+"
            line = f"[{mark}] {self._titles.pop(event.call_id, event.tool)}: {first}"
        elif kind == "error":
            line = f"[error] {event.message}"
        else:
            return
        self._newline()
        self.out.write(f"    {line}\n")


def _json_printer(out: TextIO) -> Any:
    import json

    def sink(event: Any) -> None:
        out.write(json.dumps(event.wire(), ensure_ascii=False) + "\n")
        out.flush()

    return sink


def approval_prompt(query: Any, always: str | None) -> str:
    """The question at the terminal; its "always" choices say exactly what they allow (the
    grant's label), and are left out when "always" is not offered."""
    if query.tool == "exit_plan":
        return "Approve this plan and start building? [y]es / [n]o, keep planning: "
    what = f"bash `{query.subject}`" if query.tool == "bash" else query.title
    if not always:
        return f"Allow {what}? [y]es once / [n]o: "
    return (
        f"Allow {what}? [y]es once / [a]lways ({always}, this session) / "
        "[p]roject (always, in this project) / [n]o: "
    )


async def read_terminal_line() -> str:
    """One line from stdin (a terminal), "" at its end. Read by the event loop (add_reader), not
    by a thread blocked in readline: a cancel (Ctrl+C ends the turn) stops the wait at once,
    where such a thread would keep the process alive until Enter."""
    import asyncio
    import os

    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    line: asyncio.Future[str] = loop.create_future()
    chunks: list[bytes] = []

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        chunks.append(data)
        if (not data or b"\n" in data) and not line.done():
            text = b"".join(chunks).decode("utf-8", "replace")
            line.set_result(text.split("\n", 1)[0])

    loop.add_reader(fd, readable)
    try:
        return await line
    finally:
        loop.remove_reader(fd)


def terminal_presenter(agent: Any, yes: bool, out: TextIO) -> Any:
    """The CLI's QuestionPresenter (see agentls.session.Agent.ask): --yes allows every call once;
    without a terminal each call is refused with how to allow it; else the question is asked at
    the terminal, its answer given to agent.approve."""
    import asyncio
    from contextlib import contextmanager

    from agentls.session import ApprovalError

    interactive = sys.stdin.isatty() and not yes
    hinted = False  # the how-to-allow hint is printed once (a run is one turn)

    def answer(
        question: Any, decision: str, feedback: str | None = None, scope: str = "session"
    ) -> None:
        try:
            agent.approve(question.session_id, question.request_id, decision, feedback, scope)
        except ApprovalError:
            pass  # expired or cancelled meanwhile

    async def ask_at_terminal(question: Any) -> None:
        query = question.query
        if query.diff:
            out.write("\n" + query.diff + "\n")
        if query.tool == "exit_plan":
            out.write("\n" + str(query.input.get("plan", "")) + "\n")
        out.write(f"\n{approval_prompt(query, question.always)}")
        out.flush()
        reply = (await read_terminal_line()).strip().lower()
        if reply in ("y", "yes"):
            return answer(question, "once")
        if question.always and reply in ("a", "always"):
            return answer(question, "always")
        if question.always and reply in ("p", "project"):
            return answer(question, "always", scope="project")
        out.write("Feedback for the agent (optional): ")
        out.flush()
        feedback = (await read_terminal_line()).strip()
        answer(question, "reject", feedback or None)

    @contextmanager
    def present(question: Any) -> Any:
        nonlocal hinted
        query = question.query
        asking: asyncio.Task[None] | None = None
        if yes:
            answer(question, "once")
        elif not interactive and query.tool == "exit_plan":
            out.write(f"\nThe plan (no terminal to approve it):\n{query.input.get('plan', '')}\n")
            out.flush()
            answer(
                question,
                "reject",
                "agentls run has no terminal to approve the plan; it was shown to the user. End "
                "the turn now: to build it they continue the session without --plan.",
            )
        elif not interactive:
            how = (
                "Rerun with --yes to allow every call, or allow it with a permission rule, e.g. "
                f'in .agentls/config.json: {{"permissions": {{"{query.tool}": "allow"}}}}'
            )
            if not hinted:
                # For the user too, not only the model: nothing asked them anything.
                hinted = True
                out.write(f"\nagentls: refused {query.title}: no terminal to ask you. {how}\n")
                out.flush()
            answer(
                question,
                "reject",
                f"agentls run has no terminal to ask for permission to {query.title}. {how}",
            )
        else:
            asking = asyncio.ensure_future(ask_at_terminal(question))
        try:
            yield
        finally:
            if asking is not None:
                asking.cancel()  # answered elsewhere, expired, or the turn was cancelled

    return present


async def _run(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import signal
    from pathlib import Path

    from agentls.cli.terminal import visible_stream
    from agentls.cli.workspace import workspace_settings
    from agentls.session import Agent, CommandError
    from agentls.session.images import ImageRefused, user_image

    overrides: dict[str, Any] = {"review": args.review} if args.review else {}
    if args.model:
        overrides["model"] = args.model
    if args.max_steps:
        overrides["maxSteps"] = args.max_steps
    found = workspace_settings(args.cwd, overrides)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    try:
        images = [user_image(Path(p)) for p in args.image]
    except ImageRefused as exc:
        print(f"agentls: --image {exc}", file=sys.stderr)
        return EXIT_USAGE
    if settings.untrusted_notice:
        print(settings.untrusted_notice, file=sys.stderr)
    out = sys.stdout if args.json else visible_stream(sys.stdout)
    agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
    agent.presenter = terminal_presenter(agent, args.yes, visible_stream(sys.stderr))
    agent.subscribe(_json_printer(out) if args.json else TerminalPrinter(out))
    try:
        if args.session:
            session_id = args.session
            try:
                if args.model:
                    await agent.set_model(session_id, args.model)
                else:
                    await agent.messages(session_id)  # it exists
            except KeyError:
                print(f"agentls: no session {args.session}", file=sys.stderr)
                return EXIT_USAGE
        else:
            session_id = (await agent.new_session(model=settings.model)).id
        # The mode of this run: --plan plans; without it a continued session builds.
        await agent.set_mode(session_id, "plan" if args.plan else "build")
        if args.model is None and settings.model.startswith("scripted:"):
            print(
                f"(using the built-in scripted model {settings.model}: offline, not a real model)",
                file=sys.stderr,
            )
        elif settings.model.startswith("scripted:") and not args.json:
            print(
                f"(scripted model {settings.model}: an offline scenario, not a real model)",
                file=sys.stderr,
            )

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(agent.cancel(session_id)))
        try:
            result = await agent.prompt(session_id, " ".join(args.prompt), images)
        except CommandError as exc:  # "/NAME": unknown, a refused @path: nothing was sent
            print(f"agentls: {exc}", file=sys.stderr)
            return EXIT_USAGE
    finally:
        await agent.aclose()
    if args.json:
        out.write(
            json.dumps(
                {
                    "type": "result",
                    "sessionId": result.session_id,
                    "messageId": result.message_id,
                    "finishReason": result.finish_reason,
                    "text": result.text,
                    "usage": result.usage.wire(),
                }
            )
            + "\n"
        )
    else:
        if result.message_id is None and result.text:  # a built-in command's outcome
            print(result.text)
        u = result.usage
        print(
            f"\n[{result.finish_reason}] session {result.session_id} - tokens in {u.input_tokens:,} "
            f"(cache read {u.cache_read_tokens:,}, write {u.cache_write_tokens:,}), "
            f"out {u.output_tokens:,}, cost ${u.cost_usd:.4f}",
            file=sys.stderr,
        )
    if result.finish_reason in ("end_turn", "max_tokens", "refusal"):
        return EXIT_OK
    if result.finish_reason == "cancelled":
        return EXIT_CANCELLED
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
