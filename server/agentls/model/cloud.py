"""Claude on Amazon Bedrock and Google Vertex AI, through the anthropic SDK's own clients: the
Anthropic provider with another client (the request is the Messages API's; the SDK moves the
model into the URL and signs the request).

- Bedrock: region from the provider's `region`, else AWS_REGION / AWS_DEFAULT_REGION / the AWS
  profile's; credentials the AWS way (environment, ~/.aws, SSO, instance role: boto3), or a
  Bedrock API key in AWS_BEARER_TOKEN_BEDROCK. `pip install 'agentls[bedrock]'` (boto3).
- Vertex: region from `region`, else CLOUD_ML_REGION, else `global`; project from `project`, else
  ANTHROPIC_VERTEX_PROJECT_ID / GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT, else the credentials';
  credentials are Application Default Credentials (`gcloud auth application-default login`,
  GOOGLE_APPLICATION_CREDENTIALS). `pip install 'agentls[vertex]'` (google-auth).

`baseUrl` overrides the endpoint (a proxy, a VPC endpoint, the tests' local server).
"""

from __future__ import annotations

import os
from typing import Any

from agentls.model.anthropic_provider import AnthropicProvider
from agentls.model.base import ProviderError
from agentls.model.retrying import Failure


def _require(module: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ProviderError(
            f"{extra.capitalize()} needs the {module} package: pip install 'agentls[{extra}]'"
        )


class _CloudProvider(AnthropicProvider):
    def setup_failure(self, exc: BaseException) -> Failure | None:
        # Credentials that cannot be found or refreshed (botocore, google-auth), a project the
        # SDK cannot tell: no retry helps.
        module = type(exc).__module__
        if isinstance(exc, RuntimeError) or module.startswith(("botocore", "google.auth")):
            return Failure(f"{self.name}: {exc}", False, "auth")
        return None


class BedrockProvider(_CloudProvider):
    def __init__(self, *, name: str = "bedrock", region: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.region = region

    def client(self) -> Any:
        if self._client is None:
            # The streaming answer's framing is decoded with botocore, whatever the credentials.
            _require("botocore", "bedrock")
            from anthropic import AsyncAnthropicBedrock

            self._client = AsyncAnthropicBedrock(
                # A Bedrock API key (apiKeyEnv), else the SDK's AWS_BEARER_TOKEN_BEDROCK, else
                # AWS credentials.
                api_key=self._api_key,
                aws_region=self.region
                or os.environ.get("AWS_REGION")
                or os.environ.get("AWS_DEFAULT_REGION"),
                base_url=self._base_url,
                max_retries=0,
                timeout=self.timeout_s,
            )
        return self._client


def vertex_project(configured: str | None) -> str | None:
    for value in (
        configured,
        os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID"),
        os.environ.get("GOOGLE_CLOUD_PROJECT"),
        os.environ.get("GCLOUD_PROJECT"),
    ):
        if value:
            return value
    return None


class VertexProvider(_CloudProvider):
    def __init__(
        self,
        *,
        name: str = "vertex",
        region: str | None = None,
        project: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.name = name
        self.region = region
        self.project = project

    def client(self) -> Any:
        if self._client is None:
            _require("google.auth", "vertex")
            from anthropic import AsyncAnthropicVertex

            project = vertex_project(self.project) or _credentials_project()
            self._client = AsyncAnthropicVertex(
                region=self.region or os.environ.get("CLOUD_ML_REGION") or "global",
                project_id=project,
                base_url=self._base_url,
                max_retries=0,
                timeout=self.timeout_s,
            )
        return self._client


def _credentials_project() -> str:
    """The project of the Application Default Credentials (the SDK needs one before it asks for
    a token)."""
    import google.auth
    import google.auth.exceptions

    try:
        _, project = google.auth.default()
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ProviderError(f"vertex: {exc}", kind="auth") from exc
    if not project:
        raise ProviderError(
            'vertex: no Google Cloud project: set the provider\'s "project" or '
            "ANTHROPIC_VERTEX_PROJECT_ID"
        )
    return str(project)
