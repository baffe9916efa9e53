"""The agent's tools, one module each, named after the tool (the order the model sees them is
registry.default_tools); what a tool is and may use is base.py; pieces the tools share are in
support/."""
