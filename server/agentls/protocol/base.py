"""The two kinds of wire model every request has: its params (strict) and its result."""

from __future__ import annotations

from pydantic import ConfigDict

from agentls.wire import WireModel


class Params(WireModel):
    # Unknown fields are refused so a misspelled field is an error that names it.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Result(WireModel):
    pass
