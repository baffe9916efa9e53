"""The API key out of the process's initial environment (/proc/PID/environ)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

CHILD = """
import json, os, subprocess
from agentls.environ_scrub import scrub_initial_environment
before = open("/proc/self/environ", "rb").read()
count = scrub_initial_environment()
after = open("/proc/self/environ", "rb").read()
print(json.dumps({
    "count": count,
    "key_before": b"sk-canary-1" in before,
    "key_after": b"sk-canary-1" in after,
    "token_after": b"tok-canary-2" in after,
    "other_after": b"KEEP_ME=visible" in after,
    "names_after": b"ANTHROPIC_API_KEY=" in after,
    "os_environ": os.environ.get("ANTHROPIC_API_KEY"),
    "again": scrub_initial_environment(),
    # A child started with the C library's environment (env=None takes os.environ's copy).
    "child": subprocess.run(
        ["sh", "-c", "env | grep ANTHROPIC_ || echo none"],
        capture_output=True, text=True, env=None,
    ).stdout,
}))
"""


def test_secret_values_leave_the_initial_environment_and_stay_in_os_environ() -> None:
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-canary-1",
        "ANTHROPIC_AUTH_TOKEN": "tok-canary-2",
        "KEEP_ME": "visible",
    }
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout)
    assert got["key_before"] is True  # the test would prove nothing otherwise
    assert got["count"] >= 2
    assert got["key_after"] is False and got["token_after"] is False
    assert got["other_after"] is True and got["names_after"] is False
    assert got["os_environ"] == "sk-canary-1"  # what agentls and the SDK read
    assert got["again"] == 0  # nothing left to overwrite
    # Nor empty in a child that takes the C library's environment: absent.
    assert got["child"] == "none\n"
