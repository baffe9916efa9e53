"""ask_user in an ACP editor. A client that offers form elicitation gets `elicitation/create`: a
form with the choices (when there are some) and a field for the user's own words. Any other
client gets `session/request_permission` with a choice an option and Skip; the user's own words
may come in the response's `_meta.feedback` (a string), as with a rejection's feedback."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    PermissionOption,
    RequestPermissionResponse,
)

from agentls.session import Question

CHOICE = "choice_"
# A question without choices asked where only options can be picked: the model learns why.
NO_WORDS = "this editor can show choices only; ask again with choices"


def form_elicitation(caps: ClientCapabilities) -> bool:
    """Whether the client said it shows elicitation forms."""
    return caps.elicitation is not None and caps.elicitation.form is not None


def choices_of(question: Question) -> list[str]:
    return [c for c in question.query.input.get("choices") or [] if isinstance(c, str)]


def question_text(question: Question) -> str:
    return str(question.query.input.get("question", ""))


def question_options(question: Question) -> list[PermissionOption]:
    """session/request_permission's options for ask_user: each choice, then Skip."""
    options = [
        PermissionOption(option_id=f"{CHOICE}{n}", name=choice, kind="allow_once")
        for n, choice in enumerate(choices_of(question))
    ]
    options.append(PermissionOption(option_id="reject_once", name="Skip", kind="reject_once"))
    return options


def permission_answer(
    question: Question, response: RequestPermissionResponse
) -> tuple[str, str | None]:
    """(decision, answer) of session/request_permission's response to ask_user: the user's own
    words (`_meta.feedback`) with any choice, else the choice's text; Skip, a cancel or an
    unknown option declines."""
    meta = response.field_meta or {}
    words = meta.get("feedback")
    words = words.strip() if isinstance(words, str) and words.strip() else None
    outcome = response.outcome
    choices = choices_of(question)
    if isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith(CHOICE):
        number = outcome.option_id[len(CHOICE) :]
        if number.isdigit() and int(number) < len(choices):
            return "once", words or choices[int(number)]
    return "reject", words or (None if choices else NO_WORDS)


def question_form(question: Question, session_id: str, call_id: str) -> ElicitationFormSessionMode:
    """elicitation/create's form: a choice (when there are some) and the user's own words."""
    properties: dict[str, Any] = {}
    choices = choices_of(question)
    if choices:
        properties["choice"] = ElicitationStringPropertySchema(
            type="string", title="Choose", enum=choices
        )
    properties["answer"] = ElicitationStringPropertySchema(
        type="string",
        title="Or answer in your own words" if choices else "Your answer",
        max_length=10_000,
    )
    return ElicitationFormSessionMode(
        session_id=session_id,
        tool_call_id=call_id,
        requested_schema=ElicitationSchema(type="object", properties=properties),
    )


def form_answer(response: Any) -> tuple[str, str | None]:
    """(decision, answer) of elicitation/create's response: the words written, else the choice;
    declined, cancelled or empty: a reject."""
    if isinstance(response, AcceptElicitationResponse):
        content = response.content or {}
        for key in ("answer", "choice"):
            value = content.get(key)
            if isinstance(value, str) and value.strip():
                return "once", value.strip()
    return "reject", None
