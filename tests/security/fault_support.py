"""What the store-fault, concurrent-session and CLI-edge tests share: the environment of an
`agentls` process, running one, and the faults a data directory can be given (a tiny full tmpfs,
a read-only file or directory, even for root)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer

ROOT = os.geteuid() == 0


def agentls_env(tmp_path: Path, api: MessagesAPIServer, data: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="test-key",
        AGENTLS_DATA_DIR=str(data or tmp_path / "data"),
        AGENTLS_MODEL="claude-sonnet-5-5",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    env.pop("AGENTLS_LOG", None)
    return env


def agentls(
    *args: str, env: dict[str, str], timeout: float = 90, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


def spawn_agentls(*args: str, env: dict[str, str], **kwargs: Any) -> subprocess.Popen[str]:
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", *args], env=env, text=True, **kwargs
    )


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at path (created); skips the test where it cannot be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    if not ROOT:
        pytest.skip("a full disk is simulated with a tiny tmpfs, which only root can mount")
    try:
        _mount("-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(path))
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or exc
        pytest.skip(f"cannot mount a tmpfs to fill up ({detail}); the full-disk case is not run")
    try:
        yield path
    finally:
        _umount(path)


def fill(directory: Path) -> Path:
    """Fill the filesystem of `directory` to the last byte (a file named filler)."""
    filler = directory / "filler"
    with open(filler, "ab", buffering=0) as out:
        for chunk in (65536, 4096, 512, 1):
            while True:
                try:
                    out.write(b"\0" * chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    return filler


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """Make a file or directory read-only for this process's children, root included: a chmod for
    others, and for root (whom permission bits do not stop) a read-only bind mount of it."""
    if not ROOT:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    try:
        _mount("--bind", str(path), str(path))
        _mount("-o", "remount,bind,ro", str(path))
    except (OSError, subprocess.CalledProcessError) as exc:
        _umount(path)
        pytest.skip(f"cannot make {path} read-only for root (a read-only bind mount failed: {exc})")
    try:
        yield path
    finally:
        _umount(path)


def one_line_error(stderr: str) -> str:
    """The one `agentls: ...` line of stderr; fails on a traceback or on more than one line."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("agentls: ")]
    assert len(errors) == 1, stderr
    return errors[0]
