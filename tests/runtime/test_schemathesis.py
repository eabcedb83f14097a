"""schemathesis against the running runtime and our own OpenAPI document: zero failures.

A bounded number of examples per operation keeps the run short; a failure is a bug in the code
or the document, never a check to loosen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from petgen.build import build
from tests.conftest import REPO
from tests.runtime.test_server import free_port, running_server


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    port = free_port()
    dist: Path = tmp_path_factory.mktemp("st") / "dist"
    build(REPO / "content", dist, base_url=f"http://127.0.0.1:{port}")
    with running_server(dist, port, rate_limit=0) as base:
        yield schemathesis.openapi.from_url(f"{base}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_document(case: schemathesis.Case) -> None:
    case.call_and_validate()
