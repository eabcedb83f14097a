"""The published contract, shared by build and runtime: resource shapes, JSON Schemas, error codes,
webhook event types, limits, the MCP surface and the security headers."""
