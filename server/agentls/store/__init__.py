"""Persistent storage of sessions, messages and permission grants in SQLite."""

from agentls.store.db import (
    PACK_MAX_MESSAGES,
    PACK_MIN_MESSAGES,
    SCHEMA_VERSION,
    ProjectGrant,
    SessionRecord,
    Store,
    StoredGrant,
    StoreVersionError,
    default_data_dir,
    default_db_path,
)
from agentls.store.errors import StoreError

__all__ = [
    "PACK_MAX_MESSAGES",
    "PACK_MIN_MESSAGES",
    "SCHEMA_VERSION",
    "ProjectGrant",
    "SessionRecord",
    "Store",
    "StoredGrant",
    "StoreError",
    "StoreVersionError",
    "default_data_dir",
    "default_db_path",
]
