"""Persistent storage of sessions, messages and permission grants in SQLite."""

from agentls.store.db import (
    SCHEMA_VERSION,
    SessionRecord,
    Store,
    StoreVersionError,
    default_data_dir,
    default_db_path,
)

__all__ = [
    "SCHEMA_VERSION",
    "SessionRecord",
    "Store",
    "StoreVersionError",
    "default_data_dir",
    "default_db_path",
]
