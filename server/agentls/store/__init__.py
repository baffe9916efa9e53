"""Persistent storage of sessions, messages and permission grants in SQLite."""

from agentls.store.errors import StoreError
from agentls.store.paths import default_data_dir, default_db_path
from agentls.store.repository import Store
from agentls.store.rows import ProjectGrant, SessionRecord, StoredGrant
from agentls.store.schema import SCHEMA_VERSION, StoreVersionError

__all__ = [
    "SCHEMA_VERSION",
    "ProjectGrant",
    "SessionRecord",
    "Store",
    "StoreError",
    "StoreVersionError",
    "StoredGrant",
    "default_data_dir",
    "default_db_path",
]
