"""Tests of the agents' MCP server, through a real MCP client."""
