"""Moved to agentls.workspace.disk; this re-export goes once nothing imports it."""

from agentls.workspace.disk import DiskWorkspace as DiskWorkspace
from agentls.workspace.disk import decode_text as decode_text
from agentls.workspace.disk import read_text_file as read_text_file
