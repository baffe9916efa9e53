"""Tools from MCP servers: configuration (config.py), one server's connection (connection.py),
the servers of an agent (manager.py), their tools as the agent's (tool.py, names.py) and what a
call returns as the model reads it (results.py)."""
