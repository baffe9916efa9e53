"""create_provider: a cloud provider's credentials in the environment become agentls's own, kept
from every process it starts (bash, language servers, verify commands), while the user's other
variables still reach them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentls import environ_scrub
from agentls.model.factory import ProviderOptions, create_provider
from agentls.model.providers import ProviderSettings


@pytest.fixture(autouse=True)
def _fresh_names() -> Iterator[None]:
    # None named yet: a test that ran before in this process (a Bedrock or Vertex one) may have
    # named the very variables this one expects a provider to name, or to leave to the user.
    saved = set(environ_scrub._named)
    environ_scrub._named.clear()
    yield
    environ_scrub._named.clear()
    environ_scrub._named.update(saved)


ENV = {
    "AWS_ACCESS_KEY_ID": "AKIA-TEST",
    "AWS_SECRET_ACCESS_KEY": "SECRET-AWS-KEY",
    "AWS_SESSION_TOKEN": "SECRET-AWS-SESSION",
    "AWS_REGION": "eu-west-1",
    "AWS_PROFILE": "dev",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/adc.json",
    "GOOGLE_CLOUD_PROJECT": "my-project",
    "MY_VAR": "mine",
}


def _environment_after(model: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    providers = {
        "bedrock": ProviderSettings(type="bedrock"),
        "vertex": ProviderSettings(type="vertex", project="p"),
    }
    create_provider(model, providers, ProviderOptions())
    return environ_scrub.child_environment()


def test_bedrock_keeps_aws_credentials_from_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _environment_after("bedrock/claude-sonnet-4-5", monkeypatch)
    assert not {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} & set(env)
    assert env["AWS_REGION"] == "eu-west-1" and env["AWS_PROFILE"] == "dev"
    assert env["GOOGLE_APPLICATION_CREDENTIALS"] == "/home/u/adc.json"
    assert env["MY_VAR"] == "mine"


def test_vertex_keeps_google_credentials_from_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _environment_after("vertex/claude-sonnet-4-5", monkeypatch)
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in env
    assert env["GOOGLE_CLOUD_PROJECT"] == "my-project"
    assert env["AWS_SECRET_ACCESS_KEY"] == "SECRET-AWS-KEY"  # not agentls's: the user's


def test_the_anthropic_api_leaves_cloud_variables_to_the_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = _environment_after("claude-sonnet-4-5", monkeypatch)
    assert env["AWS_SECRET_ACCESS_KEY"] == "SECRET-AWS-KEY"
    assert env["GOOGLE_APPLICATION_CREDENTIALS"] == "/home/u/adc.json"
