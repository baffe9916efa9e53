"""What the tools share and no tool is: path patterns, ripgrep, file writes, symbol lookup,
text shaping, saved outputs, and bash's sandbox and process supervision."""
