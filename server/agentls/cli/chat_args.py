"""The conversation's command line: `agentls chat [options]`, also reached as `agentls` alone
and `agentls -c` / `agentls --resume [ID]` / `agentls --model M` (no command: the chat)."""

from __future__ import annotations

from typing import Any

# Options that, first on the command line, start the conversation.
CHAT_OPTIONS = ("-c", "--continue", "--resume", "--model", "--cwd")


def chat_argv(argv: list[str]) -> list[str]:
    """`argv` with "chat" put first when no command is named: nothing at all, or a chat option."""
    if not argv:
        return ["chat"]
    first = argv[0].split("=", 1)[0]
    return ["chat", *argv] if first in CHAT_OPTIONS else argv


def add_chat_command(sub: Any) -> None:
    chat = sub.add_parser(
        "chat",
        help="a conversation in the terminal (also `agentls` alone): rendered answers, "
        "history, /commands and @files",
    )
    chat.add_argument("--cwd", default=None, help="workspace root (default: the current directory)")
    chat.add_argument(
        "--model", default=None, help="model id, or scripted:<scenario> for the offline model"
    )
    chat.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="go on with this workspace's last session",
    )
    chat.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="SESSION",
        help="go on with that session, or pick one from a list",
    )
