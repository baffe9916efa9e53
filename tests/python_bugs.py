"""Work-arounds for bugs of the Python the suite runs on, installed by tests/__init__.py before any
test module is imported.

CPython 3.11.0-3.11.7 keep ast.parse's recursion count in one per-interpreter struct
(gh-106905, fixed in 3.11.8). When two threads parse at once (a thread switch can happen inside,
whenever a garbage collection runs a finalizer), the count goes wrong and ast.parse raises
"SystemError: AST constructor recursion depth mismatch". In this suite the main thread parses
when pytest rewrites a module's asserts or shows a failure's source, while other threads parse
too: the first in-process turn imports the anthropic SDK in a worker thread
(AnthropicProvider), which imports anyio's submodules lazily, and pytest rewrites those (anyio is
a pytest plugin's package) with ast.parse in that thread (seen in
tests/tools/support/test_outputs.py, the first such test of its run: which test it is depends on
the order); Python 3.11 also parses to place a traceback's ^^^ markers (a thread logging an
exception), pydantic to read the ACP SDK's attribute docstrings. When a failure was reported at
such a moment, pytest crashed with INTERNALERROR instead of reporting it. One lock around
ast.parse makes the parses take turns."""

from __future__ import annotations

import ast
import sys
import threading
from typing import Any

# The first release with the fix (gh-106905: separate recursion state per PyAST_mod2obj call).
FIXED_IN = (3, 11, 8)


def serialize_ast_parse() -> None:
    """Make ast.parse take a process-wide lock on an affected Python (once; a no-op elsewhere)."""
    if sys.version_info >= FIXED_IN or getattr(ast.parse, "_serialized", False):
        return
    parse = ast.parse
    lock = threading.RLock()  # re-entrant: a finalizer run inside a parse may parse again

    def serialized_parse(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return parse(*args, **kwargs)

    serialized_parse._serialized = True  # type: ignore[attr-defined]
    ast.parse = serialized_parse
