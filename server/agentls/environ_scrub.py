"""The API key out of this process's initial environment, where other processes can read it.

Linux keeps the environment a process was started with in the process's own memory, and shows it
in /proc/PID/environ to every process of the same user. A command the bash tool runs (a child of
agentls, its own environment free of ANTHROPIC_ variables) could read the key there:
`tr '\\0' '\\n' < /proc/$PPID/environ`. Python copied that environment into os.environ at startup,
which is where agentls (and the SDK) read it from; nothing in this process reads the original
block afterwards. So the ANTHROPIC_ variables in it, names and values, are overwritten with NUL
bytes through /proc/self/mem, which a process may always write for itself: the C library's view
of the environment then holds empty strings where they were, so a child started without an
explicit environment does not get them either (not even empty). Best effort: elsewhere than
Linux, or with /proc unavailable, nothing changes. os.environ keeps every value.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

SECRET_PREFIX = b"ANTHROPIC_"


def scrub_initial_environment(prefix: bytes = SECRET_PREFIX) -> int:
    """Overwrite the variables named with prefix (name=value) in this process's initial
    environment block; returns how many were overwritten."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        # proc(5): after "pid (comm) ", field 3 (state) onwards; env_start and env_end are the
        # 50th and 51st fields.
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[47]), int(fields[48])
        if not 0 < start < end:
            return 0
        count = 0
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            block = mem.read(end - start)
            offset = 0
            for entry in block.split(b"\0"):
                if entry.startswith(prefix) and b"=" in entry:
                    mem.seek(start + offset)
                    mem.write(b"\0" * len(entry))
                    count += 1
                offset += len(entry) + 1
        return count
    except (OSError, ValueError, IndexError):
        return 0


# The API credentials, once taken out of os.environ (see take_credentials).
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_held: dict[str, str] = {}


def take_credentials() -> int:
    """Move the API credentials out of os.environ into this module (`agentls run` and `serve`
    call it at start). Nothing that copies os.environ then carries them (a child process started
    with the default environment, a library that dumps it); the Anthropic provider reads them with
    credential(). The key stays in this process's memory, which is why the server also makes
    itself non-dumpable (agentls.hardening). Returns how many were taken."""
    taken = 0
    for name in CREDENTIAL_VARS:
        value = os.environ.pop(name, None)
        if value:
            _held[name] = value
            taken += 1
    return taken


# What the cloud providers' SDKs read as credentials from the environment (boto3 for Bedrock,
# google-auth for Vertex): once agentls uses such a provider, they are its credentials, kept from
# the processes it starts like an API key. The user's other variables (AWS_REGION, AWS_PROFILE,
# GOOGLE_CLOUD_PROJECT, ...) still reach them.
CLOUD_CREDENTIALS: dict[str, tuple[str, ...]] = {
    "bedrock": (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    ),
    "vertex": (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
        "CLOUDSDK_AUTH_ACCESS_TOKEN",
    ),
}

# Variables read as credentials since start (a provider's apiKeyEnv): kept from child processes.
_named: set[str] = set()


def credential(name: str) -> str | None:
    """os.environ's value (when something set it since), else the one take_credentials() took.
    The name is kept from child processes from now on (child_environment)."""
    _named.add(name)
    return os.environ.get(name) or _held.get(name)


def set_credential(name: str, value: str | None) -> None:
    """A key the editor handed over while running (agent/setApiKey): credential(name) returns it
    from now on (None or empty: forgets it). Held here, never in os.environ, so no child process
    gets it; the name is kept from child processes like every credential's."""
    _named.add(name)
    os.environ.pop(name, None)  # a stale value there would win over the new one
    if value:
        _held[name] = value
    else:
        _held.pop(name, None)


def keep_credentials(names: Iterable[str]) -> None:
    """Name variables as credentials before anything reads them (each provider's apiKeyEnv, as
    soon as the settings name it, not once that provider is first used): kept from child
    processes, and out of this process's initial environment block (/proc/PID/environ)."""
    for name in names:
        if name not in _named:
            _named.add(name)
            scrub_initial_environment(name.encode() + b"=")


def child_environment() -> dict[str, str]:
    """os.environ for a process agentls starts (bash, ripgrep, verifyCommands, language
    servers): without the API settings and credentials (ANTHROPIC_*) nor any variable read as a
    credential (a provider's apiKeyEnv)."""
    return {
        k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and k not in _named
    }
