"""The packed form of finished history: a run of a session's messages in one value.

Loading a long session from its rows costs more than anything else the store does: 5,000
messages are 10,000 rows of part JSON and 5,000 of message columns, each value an object the
sqlite3 module makes, then parsed and validated into about 20,000 models (80 to 120 ms here,
most of it making objects). Messages that will not change again (a finished turn's) are also
kept packed, in runs of a few hundred: one `marshal` value each (Python's own serialization of
plain values: dicts, lists, strings, numbers; it cannot describe code to run, unlike pickle),
holding each message's columns and its parts' fields as dicts. Unpacking makes the models
directly from those dicts, as `model_construct` would, without parsing or validating: the
values were validated when the run was packed, from the rows, and marshal gives back exactly
the values it was given.

The rows stay the record; a packed run is derived from them and is never the only copy.
Triggers in the database drop a run as soon as a row of one of its messages changes (a part
saved, a message updated, inserted or moved by a compaction, deleted), in the same transaction
as the change, whichever process makes it: a run is never read stale. A run that cannot be
unpacked (a format from another version of agentls, damage) is dropped and its messages are
read from their rows.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import zlib
from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter

from agentls.history import (
    ContextPart,
    Message,
    Part,
    SummaryPart,
    TextPart,
    ThinkingPart,
    ToolPart,
    Usage,
)

# Validates one part from its JSON (also store.db's, for rows).
PART_ADAPTER: TypeAdapter[Part] = TypeAdapter(Part)
_PART_CLASSES: tuple[type[BaseModel], ...] = (
    TextPart,
    ThinkingPart,
    ToolPart,
    ContextPart,
    SummaryPart,
)

# Bump when the packed layout below changes; the fields of every model are part of the format
# too (see FORMAT), so adding a field to a part makes older runs unreadable, not wrong.
_LAYOUT = 1


def _holds_model(annotation: Any) -> bool:
    """Whether values of this annotation can hold a pydantic model (which marshal cannot)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_model(arg) for arg in get_args(annotation))


def constructible(cls: type[BaseModel]) -> bool:
    """Whether a model is whole once its __dict__ holds its (valid) field values, as construct()
    makes it: no private attributes, no post-init hook, no extra fields kept."""
    return (
        not cls.__private_attributes__
        and cls.__pydantic_post_init__ is None
        and cls.model_config.get("extra") != "allow"
    )


def _plain(cls: type[BaseModel]) -> bool:
    """Whether a part can be packed as its __dict__ and made again by construct(): its fields
    hold only plain values (marshal can hold them)."""
    return constructible(cls) and not any(
        _holds_model(field.annotation) for field in cls.model_fields.values()
    )


def _discriminator(cls: type[BaseModel]) -> str:
    default = cls.model_fields["type"].default
    assert isinstance(default, str)
    return default


# Parts whose fields are plain values are packed as their __dict__; the others (a context part
# holds a Range model) as their JSON, validated when unpacked. Keyed by their `type` tag.
PLAIN_PARTS: dict[str, type[BaseModel]] = {
    _discriminator(cls): cls for cls in _PART_CLASSES if _plain(cls)
}
_PART_FIELDS: dict[str, frozenset[str]] = {
    _discriminator(cls): frozenset(cls.model_fields) for cls in _PART_CLASSES
}
_USAGE_FIELDS = frozenset(Usage.model_fields)
_FORMAT_MODELS: tuple[type[BaseModel], ...] = (Message, Usage, *_PART_CLASSES)


def _schema_digest() -> str:
    """A digest of Message's validation schema (its parts', its usage's): a change to any field's
    type, allowed values or default changes it, and older runs are not unpacked as if valid."""
    # The schema's refs carry the id() of their class, which differs from one process to the
    # next: left out.
    text = re.sub(r"(?<=')([\w.]+):\d+(?=')", r"\1", repr(Message.__pydantic_core_schema__))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


FORMAT = f"agentls-packed/{_LAYOUT}/marshal{marshal.version}/{_schema_digest()}/" + ";".join(
    f"{cls.__name__}:{','.join(cls.model_fields)}" for cls in _FORMAT_MODELS
)

_new = object.__new__
_set = object.__setattr__


class PackError(Exception):
    """A packed run that cannot be unpacked (another format, or damaged)."""


def pack(messages: Sequence[Message], seqs: Sequence[int]) -> bytes:
    """The packed run of these messages (with their seqs, in order).

    The messages must hold only the values a load gives (JSON values, as the rows hold them):
    pack what load_messages returned, not messages built in code, whose values (a tuple in a
    tool's input) would come back unlike what the rows give.
    """
    rows: list[tuple[Any, ...]] = []
    for seq, message in zip(seqs, messages, strict=True):
        parts: list[dict[str, Any] | str] = []
        for part in message.parts:
            if part.type in PLAIN_PARTS:
                parts.append(dict(part.__dict__))
            else:
                parts.append(part.model_dump_json())
        usage = message.usage
        rows.append(
            (
                seq,
                message.id,
                message.role,
                message.created_at,
                message.finish_reason,
                None if usage is None else dict(usage.__dict__),
                message.error,
                message.reverted,
                parts,
            )
        )
    body = marshal.dumps(rows, 4)
    return marshal.dumps((FORMAT, zlib.crc32(body), body), 4)


# Messages and usages are made by construct() too.
_CONSTRUCTIBLE = constructible(Message) and constructible(Usage)


def construct(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> Any:
    """A model holding these (already valid) values, as model_construct makes one, without its
    Python loop over the fields (`constructible` says for which models that is whole)."""
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def unpack(
    data: bytes, session_id: str, first_seq: int, last_seq: int, count: int
) -> list[Message]:
    """The messages of a packed run (of this session, seqs first_seq..last_seq, count of them).

    Raises PackError when the run is not one this version packed, or not what its row says.
    """
    try:
        packed_format, checksum, body = marshal.loads(data)
        if packed_format != FORMAT:
            raise PackError("a packed run of another format")
        if zlib.crc32(body) != checksum:
            raise PackError("a damaged packed run (its checksum differs)")
        rows = marshal.loads(body)
    except (EOFError, ValueError, TypeError) as exc:
        raise PackError(f"an unreadable packed run: {exc}") from exc
    if not _CONSTRUCTIBLE:
        raise PackError("messages are no longer made from their fields alone")
    if type(rows) is not list or len(rows) != count:
        raise PackError("a packed run holding another number of messages than its row says")
    # Each model holds every field, so one set of the fields present serves all models of a
    # class: pydantic only ever adds a field's name to it (on assignment), never removes one.
    message_fields = set(Message.model_fields)
    usage_fields = set(_USAGE_FIELDS)
    part_fields = {kind: set(fields) for kind, fields in _PART_FIELDS.items()}
    plain = PLAIN_PARTS
    validate_part = PART_ADAPTER.validate_json
    new = _new
    put = _set
    messages: list[Message] = []
    append = messages.append
    previous = first_seq - 1
    try:
        for seq, message_id, role, created_at, finish_reason, usage, error, reverted, raw in rows:
            if not previous < seq <= last_seq:
                raise PackError("a packed run whose messages are out of order or range")
            previous = seq
            parts: list[Any] = []
            for value in raw:
                if type(value) is dict:
                    # As construct(), inlined: 10,000 parts.
                    kind = value["type"]
                    part = new(plain[kind])
                    put(part, "__dict__", value)
                    put(part, "__pydantic_fields_set__", part_fields[kind])
                    put(part, "__pydantic_extra__", None)
                    put(part, "__pydantic_private__", None)
                    parts.append(part)
                else:
                    parts.append(validate_part(value))
            append(
                construct(
                    Message,
                    {
                        "id": message_id,
                        "session_id": session_id,
                        "role": role,
                        "created_at": created_at,
                        "parts": parts,
                        "finish_reason": finish_reason,
                        "usage": None if usage is None else construct(Usage, usage, usage_fields),
                        "error": error,
                        "reverted": reverted,
                    },
                    message_fields,
                )
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise PackError(f"a damaged packed run: {exc!r}") from exc
    return messages
