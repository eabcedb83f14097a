"""What every request passes through: request ids and the access log, metrics, connection limits,
body guard, CORS, security headers, error envelopes, query parameters."""
