"""Serving a release: the HTTP API and web page (app.py), the MCP server (mcp.py), one opened
release (release.py) and its hot swap when ROOT/published.json names a new one (swap.py)."""
