"""`agentls export SESSION` (the session as Markdown on stdout), `agentls rename SESSION TITLE`,
`agentls delete SESSION`, `agentls fork SESSION MESSAGE`: the panel's session management, from
the terminal, through the Agent (session/manage.py)."""

from __future__ import annotations

import argparse
import os
import sys

from agentls.cli.terminal import visible

EXIT_OK = 0
EXIT_USAGE = 2


def add_session_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help="print a session as Markdown (agentls export ID > f.md)")
    export.add_argument("session", help="the session id (agentls sessions lists them)")
    rename = sub.add_parser("rename", help="give a session a new title")
    rename.add_argument("session")
    rename.add_argument("title")
    delete = sub.add_parser("delete", help="delete a session and everything of it")
    delete.add_argument("session")
    fork = sub.add_parser("fork", help="a new session with a session's history up to a message")
    fork.add_argument("session")
    fork.add_argument("message", help="the last message id to keep")
    fork.add_argument("--title", default=None)


async def session_command(args: argparse.Namespace) -> int:
    from agentls.config import Settings
    from agentls.session import Agent, SessionBusyError

    agent = await Agent.open(settings=Settings(), root=os.getcwd(), watch_instructions=False)
    try:
        if args.command == "export":
            sys.stdout.write(visible(await agent.export_markdown(args.session)))
        elif args.command == "rename":
            print(await agent.rename_session(args.session, args.title))
        elif args.command == "delete":
            for sid in await agent.delete_session(args.session):
                print(f"deleted {sid}")
        else:
            record = await agent.fork_session(args.session, args.message, args.title)
            print(visible(f"{record.id}  {record.title}"))
    except KeyError as exc:
        print(f"agentls: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, SessionBusyError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await agent.aclose()
    return EXIT_OK
