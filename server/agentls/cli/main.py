"""The `agentls` command: `run` a prompt headless, list `sessions`."""

from __future__ import annotations

# Only what every command needs: each command imports what it uses when it runs.
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from agentls.config import Settings
    from agentls.session import Agent
    from agentls.session.state import TurnResult

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CANCELLED = 130


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from agentls.cli.agents import add_agents_command
    from agentls.cli.background import add_background_command
    from agentls.cli.chat_args import add_chat_command
    from agentls.cli.folders import add_folder_argument
    from agentls.cli.hooks import add_hooks_command
    from agentls.cli.review import add_review_commands
    from agentls.cli.rewind import add_rewind_command
    from agentls.cli.session_admin import add_session_commands
    from agentls.cli.skills import add_skills_command

    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent that lives in a language server."
    )
    sub = parser.add_subparsers(dest="command")  # none: the conversation (`chat`)
    add_chat_command(sub)

    run = sub.add_parser("run", help="answer one prompt in the terminal, streaming the answer")
    run.add_argument("prompt", nargs="*", help="what to do (may be left out with --image)")
    run.add_argument("--cwd", default=None, help="workspace root (default: the current directory)")
    add_folder_argument(run)
    run.add_argument(
        "--model", default=None, help="model id, or scripted:<scenario> for the offline model"
    )
    run.add_argument("--session", default=None, help="continue this session id")
    run.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue this workspace's last session",
    )
    run.add_argument(
        "--retry",
        action="store_true",
        help="with --session: run its failed last turn again from where it failed (no prompt)",
    )
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
    run.add_argument(
        "--background",
        action="store_true",
        help="run in a new git worktree on its own branch and return at once (agentls background)",
    )
    # The detached run of a background session: questions wait for `agentls background answer`.
    run.add_argument("--wait-answers", action="store_true", help=argparse.SUPPRESS)

    sessions = sub.add_parser("sessions", help="list sessions")
    sessions.add_argument("--json", action="store_true", help="print JSON")
    sessions.add_argument("--cwd", default=None, help="only sessions of this workspace")
    sessions.add_argument("--limit", type=int, default=50)
    sessions.add_argument("--search", default=None, help="only those whose title or text has it")
    add_session_commands(sub)  # export, rename, delete, fork
    add_skills_command(sub)
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
    permissions.add_argument(
        "action",
        nargs="?",
        choices=["import"],
        help="import: write Claude Code's permissions.allow/ask/deny (~/.claude and the "
        "workspace's .claude settings) as agentls rules",
    )
    permissions.add_argument(
        "--dry-run", action="store_true", help="with import: show the rules, write nothing"
    )

    trust = sub.add_parser(
        "trust",
        help="confirm a workspace's .agentls/config.json and .mcp.json (their exact content, "
        "shown first), or revoke or list",
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
    add_hooks_command(sub)
    add_agents_command(sub)
    add_background_command(sub)  # list, diff, merge, remove
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
    from agentls.cli.chat_args import chat_argv

    args = build_parser().parse_args(chat_argv(sys.argv[1:] if argv is None else argv))
    if args.command == "serve":
        return _serve()
    if args.command == "acp":
        _harden()
        from agentls.acp.server import serve as serve_acp

        return serve_acp()
    return _command(args)


def _command(args: argparse.Namespace) -> int:
    """Run the command of the parsed arguments (every one but serve)."""
    if args.command == "skills":
        from agentls.cli.skills import skills_command

        return skills_command(args)
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
        if args.command == "run" and args.background:  # a launcher: the run is its own process
            from agentls.cli.background import run_background

            return run_background(args)
        if args.command == "background":
            from agentls.cli.background import background_command

            return asyncio.run(background_command(args))
        if args.command == "run":
            _harden()
            return asyncio.run(_run(args))
        if args.command == "chat":
            from agentls.cli.chat import chat

            _harden()
            return asyncio.run(chat(args))
        if args.command == "sessions":
            return asyncio.run(_sessions(args))
        if args.command in ("export", "rename", "delete", "fork"):
            from agentls.cli.session_admin import session_command

            return asyncio.run(session_command(args))
        if args.command == "permissions" and args.action == "import":
            from agentls.cli.permissions_import import run_import

            return run_import(args)
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
    from agentls.cli.background import print_background, with_background

    if args.json:
        print(json.dumps(with_background([r.wire() for r in records]), indent=2))
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
        cost = f"{'~' if u.estimated else ''}${u.cost_usd:,.4f}"  # ~: partly estimated
        print(
            f"{r.id:<32} {when:<16} {u.input_tokens:>10,} {cache:>21} {u.output_tokens:>9,} "
            f"{cost:>10}  {visible(r.title)}  ({visible(r.cwd)})"
        )
    print_background(records)  # their state, cost and changed files
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


async def _run(args: argparse.Namespace) -> int:
    import asyncio
    import signal
    from pathlib import Path

    from agentls.cli.folders import take_folders, use_folders
    from agentls.cli.printing import json_printer, terminal_presenter
    from agentls.cli.skills import say_untrusted_skills
    from agentls.cli.terminal import visible_stream
    from agentls.cli.trust import resolve_settings
    from agentls.session import Agent, CommandError, NothingToRetry
    from agentls.session.images import ImageRefused, user_image

    prompt = " ".join(args.prompt)
    problem = _run_usage_problem(args, prompt)
    if problem is not None:
        print(f"agentls: {problem}", file=sys.stderr)
        return EXIT_USAGE
    others = take_folders(args)  # --folder: the workspace's other folders (cli/folders.py)
    if others is None:
        return EXIT_USAGE
    found = await resolve_settings(args)  # cli/trust.py
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
    say_untrusted_skills(root, settings)
    out = sys.stdout if args.json else visible_stream(sys.stdout)
    agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
    agent.presenter = terminal_presenter(agent, args.yes, visible_stream(sys.stderr))
    # Without a terminal no one can answer the agent's questions: ask_user is not offered.
    agent.prompt_kind = dataclasses.replace(agent.prompt_kind, attended=sys.stdin.isatty())
    agent.subscribe(json_printer(out) if args.json else _printer(out))
    try:
        if not await use_folders(agent, others, interactive=sys.stdin.isatty() and not args.yes):
            return EXIT_USAGE
        session_id = await _run_session(agent, args, settings)
        if session_id is None:
            return EXIT_USAGE
        if args.wait_answers:  # cli/background_answer.py
            from agentls.cli.background_answer import answer_later

            answer_later(agent, session_id, args.yes)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(agent.cancel(session_id)))
        try:
            if args.retry:
                result = await agent.retry(session_id)
            else:
                result = await agent.prompt(session_id, prompt, images)
        except (CommandError, NothingToRetry) as exc:  # "/NAME" unknown, ...: nothing was sent
            print(f"agentls: {exc}", file=sys.stderr)
            return EXIT_USAGE
    finally:
        await agent.aclose()
    _print_result(args, out, result)
    if not args.json:
        from agentls.cli.resume import resume_hint

        print(resume_hint(result.session_id), file=sys.stderr)
    if result.finish_reason in ("end_turn", "max_tokens", "refusal"):
        return EXIT_OK
    if result.finish_reason == "cancelled":
        return EXIT_CANCELLED
    return EXIT_FAILED


def _run_usage_problem(args: argparse.Namespace, prompt: str) -> str | None:
    """What is wrong with run's arguments, if anything."""
    if args.retry and (not args.session or prompt.strip() or args.image):
        return "run --retry needs --session and no prompt or --image"
    if args.continue_ and args.session:
        return "run takes --session or --continue, not both"
    if not prompt.strip() and not args.image and not args.retry:
        return "run needs a prompt, or an --image"
    return None


async def _run_session(agent: Agent, args: argparse.Namespace, settings: Settings) -> str | None:
    """The session the run prompts (--session's, or a new one), in the run's mode; None: no
    such session (said)."""
    from agentls.cli.background import elsewhere as background_elsewhere

    if args.session:
        session_id: str = args.session
        if (refused := background_elsewhere(session_id, agent.root)) is not None:
            print(f"agentls: {refused}", file=sys.stderr)
            return None
        try:
            if args.model:
                await agent.set_model(session_id, args.model)
            else:
                await agent.messages(session_id)  # it exists
        except KeyError:
            print(f"agentls: no session {args.session}", file=sys.stderr)
            return None
    else:
        session_id = (
            await _continued(agent, args) or (await agent.new_session(model=settings.model)).id
        )
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
    return session_id


async def _continued(agent: Agent, args: argparse.Namespace) -> str | None:
    """With --continue: the workspace's last session (None, said: there is none yet)."""
    if not args.continue_:
        return None
    from agentls.cli.resume import last_session

    record = await last_session(agent, agent.root)
    if record is None:
        print("(no session of this workspace to continue yet: a new one)", file=sys.stderr)
        return None
    if args.model:
        await agent.set_model(record.id, args.model)
    found: str = record.id
    return found


def _printer(out: TextIO) -> Any:
    """What a person sees: rendered at a terminal (NO_COLOR unset), plain text otherwise."""
    from agentls.cli.printing import TerminalPrinter
    from agentls.cli.render import RichPrinter
    from agentls.cli.terminal import wants_colour

    return RichPrinter(sys.stdout) if wants_colour(sys.stdout) else TerminalPrinter(out)


def _print_result(args: argparse.Namespace, out: TextIO, result: TurnResult) -> None:
    """The run's last line: a JSON result line with --json, else the finish reason, session,
    tokens and cost on stderr (a built-in command's outcome first)."""
    import json

    if args.json:
        out.write(json.dumps(result.wire()) + "\n")
        return
    if result.message_id is None and result.text:  # a built-in command's outcome
        print(result.text)
    u = result.usage
    print(
        f"\n[{result.finish_reason}] session {result.session_id} - tokens in {u.input_tokens:,} "
        f"(cache read {u.cache_read_tokens:,}, write {u.cache_write_tokens:,}), "
        f"out {u.output_tokens:,}, cost {'~' if u.estimated else ''}${u.cost_usd:.4f}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())
