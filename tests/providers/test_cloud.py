"""Claude on Bedrock and Vertex through the anthropic SDK's own clients, against a local server
standing in for the clouds' endpoints (`baseUrl`): the URL each request goes to, its signature
or token, its body, and Bedrock's event-stream framing, all real SDK and credential code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from messages_api import Reply, reply, text, tool_use
from tests.providers.cloud_server import ACCESS_TOKEN, CloudServer
from tests.providers.conftest import DEMO_STEPS, NEW


@pytest.fixture
def cloud() -> Iterator[CloudServer]:
    with CloudServer() as server:
        yield server


def demo_replies() -> list[Reply]:
    return [
        reply(text(t), *([tool_use(tool, tool_input)] if tool else []))
        for t, tool, tool_input in DEMO_STEPS
    ]


@pytest.fixture
def aws_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Static AWS credentials, and none of the developer's (~/.aws, a profile, a bearer token)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "ANTHROPIC_BEDROCK_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local-test-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


async def test_the_demo_fix_completes_on_bedrock(
    make_agent: Any, cloud: CloudServer, aws_env: None
) -> None:
    cloud.enqueue(*demo_replies())
    bedrock = {"type": "bedrock", "region": "eu-central-1", "baseUrl": cloud.url}
    harness = await make_agent(
        {
            "model": "bedrock/claude-sonnet-4-5",
            "providers": {"bedrock": bedrock},
            "thinking": "disabled",  # the scripted replies start with no thinking block
        }
    )
    result = await harness.prompt("Run the tests and fix what fails")

    assert result.finish_reason == "end_turn", result.error
    assert NEW in (harness.root / "calc.py").read_text()
    seen = cloud.requests("bedrock")
    assert [s.problem for s in seen] == [None] * 5
    # The catalogue's name became Bedrock's inference-profile id, in the URL, not the body.
    assert {s.model for s in seen} == {"global.anthropic.claude-sonnet-4-5-20250929-v1:0"}
    first = seen[0]
    assert first.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDLOCALTEST/")
    assert "/eu-central-1/bedrock/aws4_request" in first.headers["authorization"]
    assert "x-amz-date" in first.headers
    assert "anthropic-version" not in first.headers and first.body["anthropic_version"]
    # Prompt caching on (Claude takes it), and the tool results went back.
    assert "cache_control" in json.dumps(seen[-1].body["system"])
    results = [b for m in seen[-1].body["messages"] if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert len(results) == 4
    # Priced as Claude Sonnet 4.5.
    assert result.usage.cost_usd > 0


def use_adc(tmp_path: Path, cloud: CloudServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Application Default Credentials of a (workforce) user, refreshed at the local token
    endpoint: the one credentials file whose token URL is not Google's fixed one."""
    adc = tmp_path / "adc.json"
    adc.write_text(json.dumps({
        "type": "external_account_authorized_user",
        "audience": "//iam.googleapis.com/locations/global/workforcePools/p/providers/q",
        "client_id": "cid", "client_secret": "csecret", "refresh_token": "rtoken",
        "token_url": f"{cloud.url}/token",
    }))  # fmt: skip
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))


async def test_the_demo_fix_completes_on_vertex(
    make_agent: Any, cloud: CloudServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_adc(tmp_path, cloud, monkeypatch)
    for name in ("ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"):
        monkeypatch.delenv(name, raising=False)
    cloud.enqueue(*demo_replies())
    vertex = {"type": "vertex", "region": "us-east5", "project": "agentls-test",
              "baseUrl": cloud.url}  # fmt: skip
    harness = await make_agent({"model": "vertex/claude-opus-5", "providers": {"vertex": vertex}})
    result = await harness.prompt("Run the tests and fix what fails")

    assert result.finish_reason == "end_turn", result.error
    assert NEW in (harness.root / "calc.py").read_text()
    seen = cloud.requests("vertex")
    assert [s.problem for s in seen] == [None] * 5
    assert {(s.project, s.region, s.model) for s in seen} == {
        ("agentls-test", "us-east5", "claude-opus-5")
    }
    assert all(s.headers["authorization"] == f"Bearer {ACCESS_TOKEN}" for s in seen)
    assert "model" not in seen[0].body and seen[0].body["anthropic_version"]
    token = cloud.requests("token")
    assert token and "grant_type=refresh_token" in token[0].body


async def test_vertex_without_a_project_says_what_to_set(
    make_agent: Any, cloud: CloudServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_adc(tmp_path, cloud, monkeypatch)
    for name in ("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    vertex = {"type": "vertex", "region": "us-east5", "baseUrl": cloud.url}
    harness = await make_agent({"model": "vertex/claude-opus-5", "providers": {"vertex": vertex}})
    result = await harness.prompt("hi")
    assert result.finish_reason == "error"
    assert "ANTHROPIC_VERTEX_PROJECT_ID" in (result.error or "")
    assert cloud.requests("vertex") == []


async def test_a_bedrock_api_key_from_apikeyenv_is_a_bearer_token(
    make_agent: Any, cloud: CloudServer, aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLS_TEST_BEDROCK_KEY", "bedrock-api-key-1")
    cloud.enqueue(reply(text("Hello from Bedrock.")))
    bedrock = {"type": "bedrock", "region": "us-west-2", "baseUrl": cloud.url,
               "apiKeyEnv": "AGENTLS_TEST_BEDROCK_KEY"}  # fmt: skip
    harness = await make_agent(
        {"model": "bedrock/claude-haiku-4-5", "providers": {"bedrock": bedrock}}
    )
    result = await harness.prompt("hi")
    assert result.text == "Hello from Bedrock.", result.error
    (seen,) = cloud.requests("bedrock")
    assert seen.headers["authorization"] == "Bearer bedrock-api-key-1"
    assert seen.model == "global.anthropic.claude-haiku-4-5-20251001-v1:0"
