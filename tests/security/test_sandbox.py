"""The bash sandbox (bubblewrap): writes outside the workspace fail, secrets are hidden, the
network is off, /tmp is private, agentls's own data cannot be written, "required" refuses
without bwrap, and the "sandboxed" rule skips the question only inside the sandbox.

Skipped with the reason when bubblewrap does not work here; failing under CI ($CI)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.support.sandbox import SandboxPolicy
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import context, outside_dir, require_bwrap, run

ESCAPE = "sandbox escape"


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def outside() -> Iterator[Path]:
    path = outside_dir("sandbox")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake $HOME outside /tmp holding credentials."""
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET-SSH-KEY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("SECRET-AWS\n")
    (home / ".netrc").write_text("machine x password SECRET-NETRC\n")
    (home / ".git-credentials").write_text("https://u:SECRET-GIT@x\n")
    monkeypatch.setenv("HOME", str(home))
    return home


WRITES_OUTSIDE = [
    "echo x > {out}",
    "touch {out}",
    "cp /etc/hostname {out}",
    "python3 -c \"open('{out}', 'w').write('x')\"",
    "mount -o remount,rw / ; touch {out}",
    "unshare -r sh -c 'mount -o remount,rw / ; touch {out}'",
    "unshare -rm sh -c 'mount -t tmpfs none {dir} ; touch {out}'; touch {out}",
    "ln -s {out} link && echo x > link",
    "mkdir -p {dir}/sub 2>/dev/null; echo x > {dir}/sub/f; echo x > {out}",
    "echo x | tee {out}",
    "dd if=/dev/zero of={out} count=1",
    "bash -c 'exec 3>{out}; echo x >&3'",
    "chmod 777 {dir}; echo x > {out}",
]


@pytest.mark.parametrize("command", WRITES_OUTSIDE)
async def test_a_write_outside_the_workspace_fails(
    command: str, root: Path, outside: Path, security_figures: SecurityFigures
) -> None:
    out = outside / "escaped"
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), command.format(out=out, dir=outside))
        assert result.metadata["sandboxed"] is True
        assert not out.exists(), result.output
        assert not (outside / "sub").exists()


READ_SECRETS = [
    "cat ~/.ssh/id_rsa",
    "cat $HOME/.ssh/id_rsa",
    "ls -la ~/.ssh; cat ~/.ssh/*",
    "cat ~/.aws/credentials",
    "cat ~/.netrc ~/.git-credentials",
    "grep -r SECRET ~ 2>/dev/null",
    "find ~ -type f -exec cat {} + 2>/dev/null",
    "cat .env",
    "cat sub/Server.PEM",
    "cat link-to-key",
    "cat deploy/.ENV.production",
    "tar cf - . 2>/dev/null | strings | grep SECRET",
    "unshare -rm sh -c 'umount ~/.ssh; cat ~/.ssh/id_rsa'",
]


@pytest.mark.parametrize("command", READ_SECRETS)
async def test_secrets_are_not_readable(
    command: str, root: Path, home: Path, security_figures: SecurityFigures
) -> None:
    (root / ".env").write_text("TOKEN=SECRET-DOTENV\n")
    (root / "sub").mkdir()
    (root / "sub" / "Server.PEM").write_text("SECRET-PEM\n")
    (root / "deploy").mkdir()
    (root / "deploy" / ".ENV.production").write_text("SECRET-PROD\n")
    (root / "link-to-key").symlink_to(home / ".ssh" / "id_rsa")
    (root / "readme.txt").write_text("public\n")
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), command)
        assert result.metadata["sandboxed"] is True
        assert "SECRET" not in result.output.replace("grep SECRET", "").replace("-r SECRET", ""), (
            result.output
        )


async def test_plain_files_stay_readable(root: Path, home: Path) -> None:
    (root / "readme.txt").write_text("public\n")
    tool = home / ".local" / "bin" / "mytool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    (home / ".gitconfig").write_text("[user]\n\tname = Someone\n")
    result = await run(context(root), "cat readme.txt; ~/.local/bin/mytool; cat ~/.gitconfig")
    assert "public" in result.output and "tool ran" in result.output, result.output
    assert "Someone" in result.output


async def test_the_rest_of_home_is_an_empty_folder(root: Path, home: Path) -> None:
    (home / "notes.txt").write_text("home note\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "taxes.txt").write_text("private\n")
    result = await run(context(root), "cat ~/notes.txt ~/Documents/taxes.txt; ls -A ~ | wc -l")
    assert "home note" not in result.output and "private" not in result.output, result.output
    # Nothing of $HOME's own, not even which secret folders exist (.ssh, .aws, .netrc are there).
    assert result.output.splitlines()[-4] == "0", result.output
    assert (home / "notes.txt").read_text() == "home note\n"


async def test_home_shown_by_the_setting(root: Path, home: Path) -> None:
    (home / "tools").mkdir()
    (home / "tools" / "data.txt").write_text("shared data\n")
    (home / "tools" / "deploy.key").write_text("SECRET-KEY-IN-SHOWN\n")
    ctx = context(root)
    ctx.sandbox = SandboxPolicy(mode="required", home_readable=("tools",))
    result = await run(ctx, "cat ~/tools/data.txt ~/tools/deploy.key")
    assert "shared data" in result.output and "SECRET" not in result.output, result.output


HOME_SECRETS = {
    ".env.local": "SECRET-ENV-LOCAL",
    "certs/server.pem": "SECRET-CERT",
    "credentials.json": "SECRET-CREDS",
    "service-account-prod.json": "SECRET-SA",
    "id_ed25519_work": "SECRET-ED25519",
    "deploy/prod.key": "SECRET-PROD-KEY",
    ".config/agentls/config.json": "SECRET-MCP-TOKEN",
    ".local/bin/leaked.pem": "SECRET-IN-TOOL-FOLDER",
}


@pytest.mark.parametrize("name", sorted(HOME_SECRETS))
async def test_home_secrets_by_glob_are_not_readable(
    name: str,
    root: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    path = home / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HOME_SECRETS[name] + "\n")
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), f"cat ~/{name}; grep -r SECRET ~ 2>/dev/null; echo end")
        assert result.metadata["sandboxed"] is True
        assert "SECRET-" not in result.output, result.output


async def test_agentls_config_elsewhere_is_hidden(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, security_figures: SecurityFigures
) -> None:
    config = outside / "xdg" / "agentls"
    config.mkdir(parents=True)
    (config / "config.json").write_text('{"mcpServers": {"x": {"env": {"T": "SECRET-T"}}}}')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(outside / "xdg"))
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), f"cat {config}/config.json; ls -A {config} | wc -l")
        assert "SECRET" not in result.output, result.output
        assert result.output.splitlines()[-4:-3] == ["0"], result.output


NETWORK = [
    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('CONNECTED')\"",
    "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo CONNECTED",
    "unshare -rn sh -c \"bash -c 'echo > /dev/tcp/127.0.0.1/{port}'\" && echo CONNECTED",
]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def accepted(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


@pytest.mark.parametrize("command", NETWORK)
async def test_the_network_is_off(
    command: str, root: Path, listener: socket.socket, security_figures: SecurityFigures
) -> None:
    port = listener.getsockname()[1]
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), command.format(port=port))
        assert "CONNECTED" not in result.output
        assert accepted(listener) == 0
        assert "network off" in result.output


async def test_sandbox_network_lets_it_connect(root: Path, listener: socket.socket) -> None:
    # The control: the same connection goes through when sandboxNetwork allows it.
    port = listener.getsockname()[1]
    result = await run(context(root, network=True), NETWORK[0].format(port=port))
    assert "CONNECTED" in result.output and "network on" in result.output
    assert accepted(listener) == 1


async def test_the_workspace_is_writable(root: Path) -> None:
    result = await run(context(root), "mkdir -p out && echo built > out/f && cat out/f")
    assert (root / "out" / "f").read_text() == "built\n"
    assert result.metadata["sandboxed"] is True
    assert "(ran in the sandbox: workspace writable, network off)" in result.output
    assert result.output.endswith("Exit code: 0")


async def test_tmp_is_private(root: Path, security_figures: SecurityFigures) -> None:
    token = os.urandom(4).hex()
    host_file = Path("/tmp") / f"agentls-host-{token}"
    host_file.write_text("HOST-TMP-SECRET\n")
    try:
        with security_figures.attempt(ESCAPE):
            result = await run(
                context(root),
                f"cat {host_file}; ls /tmp | grep -c agentls-host; "
                f"echo mine > /tmp/agentls-sbx-{token}; cat /tmp/agentls-sbx-{token}",
            )
            assert "HOST-TMP-SECRET" not in result.output
            assert "No such file or directory" in result.output
            assert result.output.splitlines()[1] == "0"  # ls /tmp shows none of the host's
            assert "mine" in result.output  # a writable /tmp of its own
            assert not (Path("/tmp") / f"agentls-sbx-{token}").exists()
    finally:
        host_file.unlink()


@pytest.mark.parametrize("inside", [True, False], ids=["data-dir-in-workspace", "data-dir-outside"])
async def test_agentls_data_and_config_cannot_be_written(
    inside: bool,
    root: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
) -> None:
    base = root if inside else outside
    data = base / "data"
    data.mkdir()
    (data / "agentls.db").write_text("DB")
    config = base / "config" / "agentls"
    config.mkdir(parents=True)
    (config / "config.json").write_text("{}")
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    attacks = [
        f"echo x > {data}/agentls.db",
        f"rm -f {data}/agentls.db",
        f"touch {data}/grants",
        f'echo \'{{"permissions": {{"*": "allow"}}}}\' > {config}/config.json',
        f"mv {config} {base}/moved",
        f"rm -rf {data}",
    ]
    for attack in attacks:
        with security_figures.attempt(ESCAPE):
            result = await run(context(root), attack)
            assert (data / "agentls.db").read_text() == "DB", result.output
            assert (config / "config.json").read_text() == "{}", result.output
            assert not (data / "grants").exists()


async def test_required_without_bwrap_refuses(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, security_figures: SecurityFigures
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "touch"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    with security_figures.attempt(ESCAPE):
        ctx = context(root, mode="required")
        with pytest.raises(ToolError, match="sandbox is required.*bubblewrap"):
            await run(ctx, "touch ran")
        assert not (root / "ran").exists() and not ctx.queries  # not even asked
    # "auto" runs it, unsandboxed, and says nothing about a sandbox.
    result = await run(context(root, mode="auto"), "touch ran")
    assert (root / "ran").exists() and result.metadata["sandboxed"] is False
    assert "sandbox" not in result.output


async def test_the_question_says_sandboxed(root: Path) -> None:
    ctx = context(root, mode="auto")
    await run(ctx, "true")
    assert ctx.queries[-1].sandboxed is True
    off = context(root, mode="off")
    await run(off, "true")
    assert off.queries[-1].sandboxed is False


async def test_the_server_is_not_visible(root: Path, security_figures: SecurityFigures) -> None:
    with security_figures.attempt(ESCAPE):
        result = await run(
            context(root),
            f"kill -0 {os.getpid()} && echo VISIBLE; cat /proc/{os.getpid()}/cmdline; "
            "cat /proc/*/cmdline | tr '\\0' ' ' | grep -c pytest",
        )
        assert "VISIBLE" not in result.output and "pytest" not in result.output


@pytest.mark.parametrize("mode", ["auto", "off"])
async def test_sandboxed_rule_skips_the_question_only_inside_the_sandbox(
    mode: str,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness({"permissions": {"bash": "sandboxed"}, "sandbox": mode})
    api.enqueue(reply(tool_use("bash", {"command": "echo hi > made.txt"})), reply(text("done")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    with security_figures.attempt(ESCAPE):
        if mode == "auto":
            await asyncio.wait_for(turn, 20)
            assert not h.of_type("permission-request")
            assert (h.root / "made.txt").exists()
        else:
            request = await h.wait_for("permission-request")
            assert request.sandboxed is False
            assert not (h.root / "made.txt").exists()
            h.agent.approve(session.id, request.request_id, "reject")
            await asyncio.wait_for(turn, 20)
            assert not (h.root / "made.txt").exists()


async def test_a_question_inside_the_sandbox_says_so(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"sandbox": "auto"})
    api.enqueue(reply(tool_use("bash", {"command": "echo hi"})), reply(text("done")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await h.wait_for("permission-request")
    assert request.sandboxed is True
    h.agent.approve(session.id, request.request_id, "once")
    await asyncio.wait_for(turn, 20)
    results = [e for e in h.of_type("tool-result") if e.tool == "bash"]
    assert results and "ran in the sandbox" in results[0].output


async def test_the_interpreter_stays_visible_when_it_lives_under_tmp(tmp_path: Path) -> None:
    """The private /tmp must not hide what runs the command (bash's supervisor, the Python of a
    virtualenv in /tmp, as in a CI checkout there): those folders stay visible, read-only."""
    from agentls.tools.support import sandbox

    tool_dir = Path(os.path.realpath(tmp_path)) / "venv" / "bin"
    tool_dir.mkdir(parents=True)
    helper = tool_dir / "helper.sh"
    helper.write_text("echo helper-ran\n")
    root = tmp_path / "ws"
    root.mkdir()
    plan = await sandbox.prepare(context(root).sandbox, root, keep=(str(helper),))
    assert plan is not None
    proc = await asyncio.create_subprocess_exec(
        *plan.prefix,
        "bash",
        "-c",
        f"bash {helper}; (echo x > {helper}) 2>/dev/null || echo read-only",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert out.decode().split() == ["helper-ran", "read-only"]
    assert helper.read_text() == "echo helper-ran\n"


async def test_a_config_folder_inside_the_data_folder_is_hidden_with_it(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, security_figures: SecurityFigures
) -> None:
    data = outside / "data"
    (data / "config" / "agentls").mkdir(parents=True)
    (data / "config" / "agentls" / "config.json").write_text('{"token": "SECRET-IN-CONFIG"}')
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(data / "config"))
    with security_figures.attempt(ESCAPE):
        result = await run(context(root), f"cat {data}/config/agentls/config.json; echo ran")
        assert "ran" in result.output and "SECRET" not in result.output, result.output
