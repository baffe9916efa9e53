import pytest

from agentls.permission.bash import analyze
from agentls.permission.rules import PermissionRules, Rule, parse_rules


def test_defaults_allow_reading_and_ask_for_changes() -> None:
    rules = PermissionRules.from_config(None)
    for tool in ("read", "glob", "grep", "list"):
        assert rules.evaluate(tool, "src/a.py") == "allow"
    for tool in ("edit", "write", "bash"):
        assert rules.evaluate(tool, "x") == "ask"
    assert rules.evaluate("some_new_tool", "x") == "ask"


def test_short_form_tool_entry_beats_star_whatever_the_order() -> None:
    rules = PermissionRules.from_config({"edit": "allow", "*": "deny"})
    assert rules.evaluate("edit", "a.py") == "allow"
    assert rules.evaluate("bash", "ls") == "deny"
    assert rules.evaluate("read", "a.py") == "deny"


def test_long_form_last_matching_rule_wins() -> None:
    rules = PermissionRules.from_config(
        [
            {"tool": "edit", "action": "allow"},
            {"tool": "edit", "pattern": "secrets/**", "action": "deny"},
            {"tool": "edit", "pattern": "secrets/public.txt", "action": "ask"},
        ]
    )
    assert rules.evaluate("edit", "src/a.py") == "allow"
    assert rules.evaluate("edit", "secrets/deep/key.pem") == "deny"
    assert rules.evaluate("edit", "secrets/public.txt") == "ask"


def test_glob_semantics() -> None:
    rules = PermissionRules([Rule(tool="write", pattern="*.md", action="allow")])
    assert rules.evaluate("write", "README.md") == "allow"
    assert rules.evaluate("write", "docs/README.md") == "ask"  # * does not cross directories
    rules = PermissionRules([Rule(tool="write", pattern="**/*.md", action="allow")])
    assert rules.evaluate("write", "docs/deep/a.md") == "allow"
    assert rules.evaluate("write", "a.md") == "allow"
    rules = PermissionRules([Rule(tool="write", pattern="docs", action="allow")])
    assert rules.evaluate("write", "docs/x/y.txt") == "allow"
    assert rules.evaluate("write", "docsx/y.txt") == "ask"


def test_outside_workspace_needs_a_rule_with_a_pattern() -> None:
    rules = PermissionRules.from_config({"*": "allow", "read": "allow"})
    assert rules.evaluate("read", "/etc/passwd", outside_workspace=True) == "deny"
    assert not rules.opens_outside("read", "/etc/passwd")
    rules = PermissionRules.from_config(
        [{"tool": "read", "pattern": "/opt/shared", "action": "allow"}]
    )
    assert rules.opens_outside("read", "/opt/shared/lib/x.py")
    assert rules.evaluate("read", "/opt/shared/lib/x.py", outside_workspace=True) == "allow"
    assert not rules.opens_outside("read", "/opt/sharedother/x.py")
    assert not rules.opens_outside("edit", "/opt/shared/lib/x.py")


def test_bash_prefix_rules() -> None:
    rules = PermissionRules.from_config(
        [{"tool": "bash", "pattern": "git status", "action": "allow"}]
    )
    assert rules.evaluate("bash", "git status") == "allow"
    assert rules.evaluate("bash", "git status --short") == "allow"
    assert rules.evaluate("bash", "git statusx") == "ask"
    assert rules.evaluate("bash", "git push") == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf /",
        "git status && rm -rf /",
        "git status || rm -rf /",
        "git status | sh",
        "git status $(rm -rf /)",
        "git status `rm -rf /`",
        'git status "$(rm -rf /)"',
        "git status\nrm -rf /",
        "git status & rm -rf /",
    ],
)
def test_compound_commands_match_only_if_every_part_does(command: str) -> None:
    rules = PermissionRules.from_config(
        [{"tool": "bash", "pattern": "git status", "action": "allow"}]
    )
    assert rules.evaluate("bash", command) == "ask"


def test_compound_command_allowed_when_every_part_is() -> None:
    rules = PermissionRules.from_config(
        [
            {"tool": "bash", "pattern": "git status", "action": "allow"},
            {"tool": "bash", "pattern": "wc -l", "action": "allow"},
        ]
    )
    assert rules.evaluate("bash", "git status | wc -l") == "allow"


def test_the_analysis_respects_quotes() -> None:
    assert [c.text for c in analyze("echo 'a; b' && ls").commands] == ["echo a; b", "ls"]
    assert [c.text for c in analyze('echo "x | y"').commands] == ["echo x | y"]
    assert sorted(c.text for c in analyze("echo $(date) ; pwd").commands) == [
        "date",
        "echo $(date)",
        "pwd",
    ]


def test_long_form_last_match_wins_whatever_the_patterns() -> None:
    denied_last = PermissionRules.from_config(
        [
            {"tool": "edit", "pattern": "src/**", "action": "allow"},
            {"tool": "edit", "action": "deny"},
        ]
    )
    assert denied_last.evaluate("edit", "src/a.py") == "deny"
    allowed_last = PermissionRules.from_config(
        [
            {"tool": "edit", "action": "deny"},
            {"tool": "edit", "pattern": "src/**", "action": "allow"},
        ]
    )
    assert allowed_last.evaluate("edit", "src/a.py") == "allow"
    assert allowed_last.evaluate("edit", "lib/a.py") == "deny"


def test_short_form_bash_pattern_beats_its_star_whatever_the_order() -> None:
    for config in (
        {"bash": {"*": "allow", "rm": "deny"}},
        {"bash": {"rm": "deny", "*": "allow"}},
    ):
        rules = PermissionRules.from_config(config)
        assert rules.evaluate("bash", "rm -rf x") == "deny", config
        assert rules.evaluate("bash", "ls") == "allow", config


def test_sandboxed_is_for_bash_only() -> None:
    with pytest.raises(ValueError, match="only to bash"):
        parse_rules({"edit": "sandboxed"})
    rules = PermissionRules.from_config({"bash": "sandboxed"})
    assert rules.evaluate("bash", "touch x", sandboxed=True) == "allow"
    assert rules.evaluate("bash", "touch x") == "ask"


def test_exact_rules_match_one_literal_path() -> None:
    rules = PermissionRules.from_config(None).extended(
        [Rule(tool="write", pattern="**", action="allow", exact=True)]
    )
    assert rules.evaluate("write", "**") == "allow"
    assert rules.evaluate("write", "a.py") == "ask"
    assert rules.evaluate("write", "/etc/passwd", outside_workspace=True) == "deny"


def test_bad_configuration_is_a_clear_error() -> None:
    with pytest.raises(ValueError):
        parse_rules({"edit": "sometimes"})
    with pytest.raises(ValueError):
        parse_rules("allow")


def test_secrets_ask_even_under_blanket_allow_until_a_pattern_opens_them() -> None:
    for config in (None, {"read": "allow"}, {"*": "allow"}):
        rules = PermissionRules.from_config(config)
        for secret in (
            ".env",
            "config/.env.production",
            "certs/server.pem",
            "deploy.key",
            "home/id_ed25519",
        ):
            assert rules.evaluate("read", secret) == "ask", (config, secret)
        assert rules.evaluate("read", "src/environment.py") == "allow"
    opened = PermissionRules.from_config(
        [{"tool": "read", "pattern": "**/.env", "action": "allow"}]
    )
    assert opened.evaluate("read", "app/.env") == "allow"
    assert opened.evaluate("read", "deploy.key") == "ask"


# ---- webfetch: a grant is for scheme, host and port --------------------------------------------


def test_an_always_grant_for_webfetch_is_for_that_origin_only() -> None:
    from agentls.permission.grants import grant_for

    grant = grant_for("webfetch", "https://docs.example.com:443", outside_workspace=False)
    assert grant is not None and "https://docs.example.com:443" in grant.label
    rules = PermissionRules.from_config({}).extended(grant.rules)
    assert rules.evaluate("webfetch", "https://docs.example.com:443") == "allow"
    for other in (
        "http://docs.example.com:80",
        "https://docs.example.com:8443",
        "http://docs.example.com:443",
        "https://evil.docs.example.com:443",
    ):
        assert rules.evaluate("webfetch", other) == "ask", other


def test_an_older_host_grant_allows_the_default_ports_only() -> None:
    older = Rule(tool="webfetch", pattern="docs.example.com", action="allow", exact=True)
    rules = PermissionRules.from_config({}).extended([older])
    assert rules.evaluate("webfetch", "https://docs.example.com:443") == "allow"
    assert rules.evaluate("webfetch", "http://docs.example.com:80") == "allow"
    assert rules.evaluate("webfetch", "https://docs.example.com:8443") == "ask"


def test_a_configured_webfetch_rule_may_name_a_scheme_and_port() -> None:
    rules = PermissionRules.from_config(
        {"webfetch": {"*.example.com": "allow", "http://localhost:8000": "allow"}}
    )
    assert rules.evaluate("webfetch", "https://a.example.com:8443") == "allow"
    assert rules.evaluate("webfetch", "http://localhost:8000", outside_workspace=True) == "allow"
    assert rules.evaluate("webfetch", "http://localhost:8001", outside_workspace=True) == "deny"
    assert rules.evaluate("webfetch", "https://localhost:8000", outside_workspace=True) == "deny"


def test_no_grant_for_a_private_or_odd_origin() -> None:
    from agentls.permission.grants import grant_for

    assert grant_for("webfetch", "http://127.0.0.1:80", outside_workspace=True) is None
    assert grant_for("webfetch", "ftp://example.com:21", outside_workspace=False) is None
    assert grant_for("webfetch", "https://*.example.com:443", outside_workspace=False) is None
