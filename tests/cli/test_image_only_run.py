"""`agentls run --image PATH` without a prompt (issue 16 item 5): the user message is the image
block alone and the session is titled after the file; `run` with neither a prompt nor an image is
a usage error and nothing is sent."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls
from tests.cli.test_images_cli import png


def test_run_with_only_an_image(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    shot = png(tmp_path / "error dialog.png", 20, 10)
    api.enqueue(reply(text("a green dialog")))
    done = agentls("run", "--cwd", str(tmp_path), "--image", str(shot), env=env)
    assert done.returncode == 0, done.stderr
    assert "a green dialog" in done.stdout
    content = api.requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image"]
    assert base64.b64decode(content[0]["source"]["data"]) == shot.read_bytes()
    listed = agentls("sessions", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [s["title"] for s in json.loads(listed.stdout)] == ["error dialog.png"]


def test_run_with_neither_prompt_nor_image_sends_nothing(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    for args in [(), ("  ",)]:
        done = agentls("run", "--cwd", str(tmp_path), *args, env=env)
        assert done.returncode == 2
        assert "run needs a prompt, or an --image" in done.stderr
    assert api.all_requests == []
