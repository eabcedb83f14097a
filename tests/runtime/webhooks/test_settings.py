"""The webhook settings and the dist watcher's interval, from the environment (under `petgen serve` too)."""

from __future__ import annotations

import pytest

from runtime.settings import Settings, environment_only


def test_defaults_and_values() -> None:
    assert environment_only({}) == {"dist_poll": 2.0, "webhook_retry_scale": 1.0, "webhook_allow_loopback": False,
                                    "redis_timeout": 0.01, "static_cache": 16 * 1024 * 1024}
    assert environment_only({"PETGEN_STATIC_CACHE_MB": "0.5"})["static_cache"] == 512 * 1024
    assert environment_only({"PETGEN_REDIS_TIMEOUT_MS": "25"})["redis_timeout"] == 0.025  # petgen serve reads it too
    settings = Settings.from_env({"PETGEN_WEBHOOK_RETRY_SCALE": "0.001", "PETGEN_WEBHOOK_ALLOW_LOOPBACK": "1",
                                  "PETGEN_DIST_POLL": "0"})
    assert (settings.webhook_retry_scale, settings.webhook_allow_loopback, settings.dist_poll) == (0.001, True, 0.0)


@pytest.mark.parametrize("name, value, message", [
    ("PETGEN_WEBHOOK_RETRY_SCALE", "0", "PETGEN_WEBHOOK_RETRY_SCALE must be greater than 0 (1 is the real schedule)"),
    ("PETGEN_WEBHOOK_RETRY_SCALE", "fast", "PETGEN_WEBHOOK_RETRY_SCALE must be a number, not 'fast'"),
    ("PETGEN_DIST_POLL", "-1", "PETGEN_DIST_POLL must be a finite number, not negative"),
    ("PETGEN_DIST_POLL", "nan", "PETGEN_DIST_POLL must be a finite number, not negative"),
    ("PETGEN_STATIC_CACHE_MB", "-1", "PETGEN_STATIC_CACHE_MB must be a finite number, not negative"),
    ("PETGEN_WEBHOOK_ALLOW_LOOPBACK", "maybe", "PETGEN_WEBHOOK_ALLOW_LOOPBACK must be 1 or 0, not 'maybe'"),
])
def test_bad_values_are_refused_with_the_variable_named(name: str, value: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        environment_only({name: value})
    assert str(refused.value) == message
