"""`agentls run --image PATH` (repeatable), as a separate process: each image sent before the
prompt's text; an unreadable or non-image file is a usage error and nothing is sent."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls


def png(path: Path, width: int, height: int) -> Path:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 10)).save(out, format="PNG")
    path.write_bytes(out.getvalue())
    return path


def test_run_with_images(api: MessagesAPIServer, env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    one = png(tmp_path / "one.png", 12, 8)  # outside the workspace: the user named it
    two = png(root / "two.png", 9000, 90)  # past 8000 px: downscaled
    api.enqueue(reply(text("two green bars")))
    done = agentls(
        "run", "--cwd", str(root), "--image", str(one), "--image", str(two), "what?", env=env
    )
    assert done.returncode == 0, done.stderr
    assert "two green bars" in done.stdout
    content = api.requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "image", "text"]
    assert base64.b64decode(content[0]["source"]["data"]) == one.read_bytes()
    with Image.open(io.BytesIO(base64.b64decode(content[1]["source"]["data"]))) as image:
        assert image.size == (1568, 16)


def test_run_with_a_bad_image_sends_nothing(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "notes.png").write_text("just text")
    done = agentls(
        "run", "--cwd", str(tmp_path), "--image", "notes.png", "hi", env=env, cwd=tmp_path
    )
    assert done.returncode == 2
    assert "--image notes.png: it is not an image" in done.stderr
    missing = agentls(
        "run", "--cwd", str(tmp_path), "--image", "gone.png", "hi", env=env, cwd=tmp_path
    )
    assert missing.returncode == 2 and "gone.png: No such file" in missing.stderr
    assert api.all_requests == []
