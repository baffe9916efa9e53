"""The API key out of reach of approved bash commands.

`agentls run --yes` against the local Messages API, with a key unique to the test; the scripted
model has bash read the server's /proc/PID/environ, scan /proc/PID/mem region by region
(/proc/PID/maps), dump it with gdb, and look at its own environment. None may find the key. The
server is non-dumpable, and as root it keeps CAP_SYS_PTRACE from its children
(agentls.hardening); the same attacks run as an unprivileged user too (setpriv), where the
non-dumpable flag alone is what stops them, and inside the sandbox, where the server is not
even visible. A control proves the scanner works: the same scan of an ordinary process holding
the key finds it.

What remains (README): root outside agentls (or a root command given CAP_SYS_PTRACE back) can
still read the key from memory; so can /proc/kcore or a kernel module."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import bwrap_problem, require_bwrap

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

READ = "API key read by bash"

# The server: the parent of the call's supervisor ($PPID is the supervisor).
SERVER = "S=$(awk '{print $4}' /proc/$PPID/stat); "

SCAN = r"""python3 - "$S" "$PREFIX" <<'EOF'
import sys
pid, prefix = int(sys.argv[1]), sys.argv[2].encode()
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb", 0)
except OSError as exc:
    print("scan refused:", exc)
    sys.exit()
for line in maps:
    addr, perm = line.split()[:2]
    if "r" not in perm:
        continue
    start, end = (int(x, 16) for x in addr.split("-"))
    try:
        mem.seek(start)
        data = mem.read(end - start)
    except (OSError, OverflowError, ValueError):
        continue
    at = data.find(prefix)
    if at >= 0:
        print("FOUND", data[at : at + 60])
        break
else:
    print("scanned, not found")
EOF"""

ATTACKS = [
    SERVER + "cat /proc/$S/environ | tr '\\0' '\\n'",
    SERVER + "strings /proc/$S/environ /proc/$S/task/*/environ 2>&1",
    SERVER + SCAN,
    SERVER + "gdb -p $S -batch -ex 'gcore /tmp/agentls-core' >/dev/null 2>&1; "
    'grep -a -o "$PREFIX[A-Za-z0-9-]*" /tmp/agentls-core* 2>&1; rm -f /tmp/agentls-core*',
    SERVER + "python3 -c \"import os; os.kill($S, 0); print(open('/proc/$S/cmdline').read())\"",
    "env; cat /proc/self/environ /proc/$PPID/environ | tr '\\0' '\\n'",
    "for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr '\\0' '\\n'; done",
]

# The control: the same scan finds a key in an ordinary (dumpable) process of this user. Keys
# are put together at run time, so that no command line holds one whole (the scan would find
# the command's own text otherwise).
CONTROL = (
    "python3 -c \"import time; k = ''.join(['sk-ant-', 'ctl03-', '$HEX']); time.sleep(30)\" & "
    "S=$!; sleep 0.5\nPREFIX=$(printf '%s-%s-' sk-ant ctl03)\n" + SCAN + "\nkill $S"
)


@pytest.fixture
def scratch() -> Iterator[Path]:
    """World-writable scratch space (an unprivileged user runs agentls in one variant)."""
    path = Path(tempfile.mkdtemp(prefix="agentls-key-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_attacks(
    api: MessagesAPIServer, scratch: Path, *, sandbox: str, as_user: str | None
) -> tuple[str, list[str], str]:
    key = "sk-ant-api03-" + os.urandom(12).hex()
    root = scratch / "ws"
    data = scratch / "data"
    config = scratch / "config" / "agentls"
    for path in (root, data, config):
        path.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"sandbox": sandbox}))
    commands = ["PREFIX=$(printf '%s-%s-' sk-ant api03)\n" + attack for attack in ATTACKS]
    commands.append(f"HEX={os.urandom(8).hex()}\n" + CONTROL)
    for command in commands:
        api.enqueue(reply(tool_use("bash", {"command": command})))
    api.enqueue(reply(text("done")))
    python, extra_env = sys.executable, {}
    argv = ["-m", "agentls.cli.main", "run", "--cwd", str(root), "--yes", "go"]
    if as_user is not None:
        uid = pwd.getpwnam(as_user).pw_uid
        for path in [scratch, *scratch.rglob("*")]:
            os.chown(path, uid, -1)
        python, extra_env = python_for(as_user)
        argv = ["setpriv", f"--reuid={as_user}", "--regid=nogroup", "--clear-groups", python, *argv]
    else:
        argv = [python, *argv]
    env = {
        **os.environ,
        **extra_env,
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": key,
        "AGENTLS_DATA_DIR": str(data),
        "AGENTLS_MODEL": "claude-sonnet-5-5",
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "HOME": str(scratch),
    }
    proc = subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
        cwd=str(root),
    )
    assert proc.returncode == 0, proc.stderr
    # The key reached the API (the test would prove nothing otherwise).
    # (This SDK build sends api_key as "Authorization: Bearer"; older ones as x-api-key.)
    assert any(
        key in (r.headers.get("x-api-key", ""), r.headers.get("authorization", "")[7:])
        for r in api.requests
    )
    outputs: list[str] = []
    for request in api.requests:
        for message in request.body["messages"]:
            if not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    outputs.append(content if isinstance(content, str) else json.dumps(content))
    # Each tool result appears in every later request: the last request has them all, once.
    last: list[str] = []
    for message in api.requests[-1].body["messages"]:
        if isinstance(message["content"], list):
            last += [
                str(b["content"]) for b in message["content"] if b.get("type") == "tool_result"
            ]
    assert len(last) == len(commands), last
    return key, last, proc.stdout + proc.stderr


def python_for(user: str) -> tuple[str, dict[str, str]]:
    """An interpreter the user may run (this venv's may live under /root), with this venv's
    packages: (path, extra environment); skips when there is none."""
    import site

    paths = [str(Path(__file__).resolve().parents[2] / "server"), *site.getsitepackages()]
    extra = {"PYTHONPATH": os.pathsep.join(paths)}
    for candidate in (
        sys.executable,
        shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}"),
        "/usr/bin/python3",
    ):
        if not candidate:
            continue
        probe = subprocess.run(
            [
                "setpriv",
                f"--reuid={user}",
                "--regid=nogroup",
                "--clear-groups",
                candidate,
                "-c",
                "import sys, subprocess, anthropic, pydantic, agentls.cli.main\n"
                # bash's supervisor runs as sys.executable: it must be runnable too.
                "subprocess.run([sys.executable, '-I', '-S', '-c', '0'], check=True)\n"
                "print(sys.version_info[:2])",
            ],
            env={**os.environ, **extra},
            capture_output=True,
            text=True,
            check=False,
            cwd="/",
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(sys.version_info[:2]):
            return candidate, extra
    pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} that {user} may run")


def check(
    key: str, outputs: list[str], log: str, security_figures: SecurityFigures, *, control: bool
) -> None:
    for output in outputs[:-1]:
        with security_figures.attempt(READ):
            assert key not in output and key[:16] not in output, output
    assert key not in log
    if control:
        assert "FOUND" in outputs[-1], outputs[-1]  # the scanner does find a key it may read


def test_as_root_without_the_sandbox(
    api: MessagesAPIServer, scratch: Path, security_figures: SecurityFigures
) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs as root: the variant for an unprivileged user is the next test")
    key, outputs, log = run_attacks(api, scratch, sandbox="off", as_user=None)
    check(key, outputs, log, security_figures, control=True)


def test_as_an_unprivileged_user_without_the_sandbox(
    api: MessagesAPIServer, scratch: Path, security_figures: SecurityFigures
) -> None:
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to run agentls as nobody")
        user: str | None = "nobody"
    else:
        user = None  # already unprivileged
    key, outputs, log = run_attacks(api, scratch, sandbox="off", as_user=user)
    check(key, outputs, log, security_figures, control=True)


def test_inside_the_sandbox(
    api: MessagesAPIServer, scratch: Path, security_figures: SecurityFigures
) -> None:
    if bwrap_problem() is not None:
        require_bwrap()
    key, outputs, log = run_attacks(api, scratch, sandbox="required", as_user=None)
    check(key, outputs, log, security_figures, control=True)
