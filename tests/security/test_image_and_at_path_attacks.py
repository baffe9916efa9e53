"""Images and a command's @paths: a "picture" in a format whose decoder runs a program (EPS, BMP,
TIFF, ...), an @path or image uri out of the workspace or to a secret, a png link to a secret
outside. Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import CommandError
from agentls.session.images import ImageRefused, file_image, pasted_image
from agentls.session.policy import Policy
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures

# ---- images: a repository's "picture" in a format whose decoder runs a program ---------------

EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n0 0 moveto 10 10 lineto stroke\n%%EOF\n"


async def test_an_eps_named_png_runs_no_ghostscript_when_the_model_reads_it(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
) -> None:
    from PIL import EpsImagePlugin

    # A `gs` on PATH (the user's Ghostscript), which Pillow runs to decode an EPS file.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "gs-ran"
    (bin_dir / "gs").write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    (bin_dir / "gs").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(EpsImagePlugin, "gs_binary", None)
    h = await make_harness()
    (h.root / "logo.png").write_bytes(EPS)
    api.enqueue(reply(tool_use("read", {"path": "logo.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look at the logo")
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    with security_figures.attempt("image decoder runs a program"):
        assert not ran.exists()
    assert result["is_error"]


@pytest.mark.parametrize("fmt", ["EPS", "BMP", "TIFF", "ICO", "PCX"])
def test_a_pasted_image_is_decoded_only_as_png_jpeg_gif_or_webp(
    fmt: str, security_figures: SecurityFigures
) -> None:
    import base64
    import io

    from PIL import Image

    if fmt == "EPS":
        raw = EPS
    else:
        out = io.BytesIO()
        Image.new("RGB", (16, 16)).save(out, format=fmt)
        raw = out.getvalue()
    with security_figures.attempt("image decoder runs a program"):
        with pytest.raises(ImageRefused, match="not one of PNG, JPEG, GIF, WebP"):
            pasted_image(base64.b64encode(raw).decode("ascii"))


# ---- @paths and image uris out of the workspace or to a secret ---------------------------------


def png_bytes() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 4)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """A workspace with links out of it and to its secret, and a secret beside it."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("secret.txt", "secret.png"):
        (outside / name).write_bytes(png_bytes() if name.endswith(".png") else b"TOPSECRET\n")
    (root / ".env").write_text("TOKEN=TOPSECRET\n")
    (root / "id_rsa.png").write_bytes(png_bytes())
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "out.png").symlink_to(outside / "secret.png")
    (root / "env.txt").symlink_to(root / ".env")
    (root / "env.png").symlink_to(root / ".env")
    return root


AT_PATHS = ["../outside/secret.txt", "@/etc/passwd", "out.txt", "env.txt", ".env", "~/.bashrc"]


@pytest.mark.parametrize("ref", AT_PATHS)
async def test_a_commands_at_path_attaches_nothing_outside_or_secret(
    ref: str,
    hostile_tree: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    _isolated_config_home: Path,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness({"permissions": {"read": "allow"}})
    assert h.root == hostile_tree
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    session = await h.agent.new_session()
    with security_figures.attempt("@path out of the workspace or to a secret"):
        try:
            await h.agent.prompt(session.id, f"/review @{ref.removeprefix('@')}")
        except CommandError:
            pass
        assert api.requests == [] or all(
            "TOPSECRET" not in str(r.body) and "root:" not in str(r.body) for r in api.requests
        )


IMAGE_URIS = ["out.png", "env.png", "../outside/secret.png", "file:///etc/passwd", "id_rsa.png"]


@pytest.mark.parametrize("uri", IMAGE_URIS)
def test_an_image_uri_attaches_nothing_outside_or_secret(
    uri: str, hostile_tree: Path, security_figures: SecurityFigures
) -> None:
    policy = Policy(
        Settings.model_validate({"model": "m", "secretPatterns": ["**/id_rsa*"]}),
        str(hostile_tree),
    )
    with security_figures.attempt("image uri out of the workspace or to a secret"):
        with pytest.raises(ImageRefused):
            file_image(uri, hostile_tree, policy, [])


async def test_a_png_link_to_a_secret_outside_is_refused_and_not_shown(
    hostile_tree: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness({"permissions": {"read": "allow"}})
    api.enqueue(reply(tool_use("read", {"path": "out.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    await asyncio.wait_for(h.agent.prompt(session.id, "look"), 10)
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    with security_figures.attempt("image uri out of the workspace or to a secret"):
        assert result["is_error"] and "outside the workspace" in str(result["content"])
        assert "image" not in str(result["content"])
