"""Fixtures of the webhook tests."""

from tests.runtime.webhooks.support import receiver  # noqa: F401 - a fixture: a real receiver on loopback
