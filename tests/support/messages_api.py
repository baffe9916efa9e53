"""Moved to the top-level package messages_api/; this name stays only until every import is
rewritten (issue 15)."""

from messages_api import *  # noqa: F403
from messages_api import __all__  # noqa: F401
from messages_api.sse import render_message as _render  # noqa: F401
from messages_api.sse import sse_frames as _sse_frames  # noqa: F401
