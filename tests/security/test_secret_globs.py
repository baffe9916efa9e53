"""The built-in guarded globs: reading a credential file asks even under a blanket allow, in any
letter case; grep and glob (PathFilter) leave them out exactly as `read` would answer; public keys
and look-alikes stay readable; outside the workspace they stay refused."""

from __future__ import annotations

import pytest

from agentls.permission.rules import PermissionRules, secret_globs
from tests.security.conftest import SecurityFigures

SECRETS = [
    ".env",
    ".ENV",
    "app/.env.production",
    "app/.Env.Local",
    ".envrc",
    "sub/.ENVRC",
    ".npmrc",
    "pkg/.NPMRC",
    ".pypirc",
    ".netrc",
    "home/.NETRC",
    ".pgpass",
    ".git-credentials",
    ".aws/credentials",
    "home/.AWS/Credentials",
    ".docker/config.json",
    "x/.Docker/Config.JSON",
    ".kube/config",
    "ops/.kube/CONFIG",
    "server.pem",
    "Server.PEM",
    "certs/deep/ca.Pem",
    "deploy.key",
    "TLS.KEY",
    "cert.p12",
    "CERT.P12",
    "cert.pfx",
    "id_rsa",
    "keys/ID_RSA",
    "id_rsa.old",
    "id_rsa_work",
    "id_ed25519",
    "home/.ssh/id_ed25519_sk",
    "id_ecdsa",
    "id_dsa",
    "credentials.json",
    "gcp/Credentials.JSON",
    "service-account.json",
    "service-account-prod.json",
    "Service-Account-x.JSON",
]

NOT_SECRETS = [
    "src/environment.py",
    "id_rsa.pub",
    "keys/ID_ED25519.PUB",
    "keyboard.py",
    "docs/pem.md",
    "key.txt",
    "config.json",
    "kube/config",
    "credentials.py",
    "aws/credentials.md",
    "account.json",
]


@pytest.mark.parametrize("config", [None, {"read": "allow"}, {"*": "allow"}])
@pytest.mark.parametrize("name", SECRETS)
def test_secret_files_ask(security_figures: SecurityFigures, config: object, name: str) -> None:
    rules = PermissionRules.from_config(config)
    with security_figures.attempt("secret file read"):
        assert rules.evaluate("read", name) == "ask"
        assert rules.path_filter("read")(name) is False
        shown, hidden = rules.path_filter("read").split(["a.py", name])
        assert (shown, hidden) == (["a.py"], 1)
        assert not rules.path_filter("read").shows_all("a.py\n" + name)


@pytest.mark.parametrize("name", NOT_SECRETS)
def test_look_alikes_stay_readable(name: str) -> None:
    rules = PermissionRules.from_config(None)
    assert rules.evaluate("read", name) == "allow"
    assert rules.path_filter("read")(name) is True


@pytest.mark.parametrize("name", ["/home/u/.ssh/id_rsa", "/etc/.env", "/root/.aws/credentials"])
def test_secrets_outside_stay_refused(security_figures: SecurityFigures, name: str) -> None:
    with security_figures.attempt("secret file read"):
        rules = PermissionRules.from_config({"*": "allow"})
        assert rules.evaluate("read", name, outside_workspace=True) == "deny"


def test_configured_secret_globs_ignore_case_too() -> None:
    rules = PermissionRules.from_config(
        {"read": "allow"}, secret_patterns=secret_globs(["*.secret"])
    )
    assert rules.evaluate("read", "a/DB.SECRET") == "ask"
    assert rules.evaluate("read", "a/db.secrets") == "allow"


def test_a_rule_naming_the_file_opens_it() -> None:
    rules = PermissionRules.from_config(
        [{"tool": "read", "pattern": "**/.npmrc", "action": "allow"}]
    )
    assert rules.evaluate("read", "pkg/.npmrc") == "allow"
    assert rules.evaluate("read", "pkg/.NPMRC") == "ask"  # the rule's own glob keeps its case
