"""Work-arounds for bugs of the Python the suite runs on, installed by tests/__init__.py before any
test module is imported.

CPython 3.11.0-3.11.7 keep ast.parse's recursion count in one per-interpreter struct
(gh-106905, fixed in 3.11.8). When two threads parse at once (a thread switch can happen inside,
whenever a garbage collection runs a finalizer), the count goes wrong and ast.parse raises
"SystemError: AST constructor recursion depth mismatch". In this suite the main thread parses
when pytest rewrites a test module's asserts or shows a failure's source, while other threads
parse too: Python 3.11 formats a traceback's ^^^ markers with ast.parse (a thread logging an
exception, a test HTTP server's handler printing one), importing acp.schema parses each model's
source (pydantic's attribute docstrings), inspect.signature of a builtin parses its text
signature. pytest then crashed with INTERNALERROR instead of reporting the test's failure. One
lock around ast.parse makes the parses take turns."""

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
