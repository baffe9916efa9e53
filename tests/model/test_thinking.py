"""The thinking parameter of a request: on by default, adaptive or a budget as the model takes it."""

from __future__ import annotations

from agentls.model.thinking import DEFAULT_BUDGET_TOKENS, ThinkingSettings, thinking_request

ADAPTIVE_MODEL = "claude-opus-5-5"
BUDGET_MODEL = "claude-haiku-4-5"


def test_the_default_is_adaptive_thinking_on_a_model_that_thinks_adaptively() -> None:
    assert thinking_request(None, ADAPTIVE_MODEL, 16_000, 128_000) == ({"type": "adaptive"}, 16_000)
    assert thinking_request(ThinkingSettings(), "claude-sonnet-5", 16_000, 128_000)[0] == {
        "type": "adaptive"
    }


def test_the_default_is_a_budget_on_a_model_that_takes_one() -> None:
    param, max_tokens = thinking_request(None, BUDGET_MODEL, 16_000, 64_000)
    assert param == {"type": "enabled", "budget_tokens": DEFAULT_BUDGET_TOKENS}
    assert max_tokens > DEFAULT_BUDGET_TOKENS


def test_a_budget_is_never_sent_to_a_model_that_refuses_one() -> None:
    setting = ThinkingSettings(type="enabled", budget_tokens=4096)
    assert thinking_request(setting, ADAPTIVE_MODEL, 16_000, 128_000)[0] == {"type": "adaptive"}
    assert thinking_request(setting, BUDGET_MODEL, 16_000, 64_000)[0] == {
        "type": "enabled",
        "budget_tokens": 4096,
    }


def test_adaptive_asked_of_a_budget_model_gets_the_default_budget() -> None:
    param, _ = thinking_request(ThinkingSettings(type="adaptive"), BUDGET_MODEL, 16_000, 64_000)
    assert param == {"type": "enabled", "budget_tokens": DEFAULT_BUDGET_TOKENS}


def test_disabled_and_models_without_thinking_send_none() -> None:
    off = ThinkingSettings(type="disabled")
    assert thinking_request(off, ADAPTIVE_MODEL, 16_000, 128_000) == (None, 16_000)
    assert thinking_request(None, "scripted:demo", 1000, 32_000) == (None, 1000)


def test_display_goes_with_either_kind() -> None:
    shown = ThinkingSettings(display="summarized")
    assert thinking_request(shown, ADAPTIVE_MODEL, 16_000, 128_000)[0] == {
        "type": "adaptive",
        "display": "summarized",
    }
    assert thinking_request(shown, BUDGET_MODEL, 16_000, 64_000)[0] == {
        "type": "enabled",
        "budget_tokens": DEFAULT_BUDGET_TOKENS,
        "display": "summarized",
    }


def test_effort_goes_to_a_model_that_thinks_adaptively_only() -> None:
    from agentls.model.thinking import effort_request

    high = ThinkingSettings(effort="high")
    assert effort_request(high, ADAPTIVE_MODEL) == {"effort": "high"}
    assert effort_request(high, BUDGET_MODEL) is None
    assert effort_request(ThinkingSettings(), ADAPTIVE_MODEL) is None
    assert effort_request(None, ADAPTIVE_MODEL) is None
