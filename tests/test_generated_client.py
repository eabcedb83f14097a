"""A client generated from our /openapi.json with openapi-python-client works against the live service.

The document is built from the real content, the generator runs on it (no post hooks, so no formatter
is needed), and every operation is called through the generated package against a real server. Each
parsed model must equal the JSON the server sent: the models drop no field and invent none.
"""

from __future__ import annotations

import datetime as dt
import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from tests.conftest import REPO
from tests.runtime.test_server import free_port, running_server

pytestmark = pytest.mark.slow

PACKAGE = "kosenamen_client"
OPERATIONS = {"listNames": "names.list_names", "getName": "names.get_name",
              "listCategories": "categories.list_categories", "getCategory": "categories.get_category",
              "searchNames": "search.search_names", "nlAsk": "ask.nl_ask", "mcpInvoke": "mcp.mcp_invoke",
              "getStatus": "status.get_status"}


def console_script(name: str) -> str:
    """A command installed with the test extras: beside this interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"the {name} command is not installed (pip install -e '.[test]')")
    return found


@dataclass
class Generated:
    base: str  # the live server's URL
    output: str  # what the generator printed
    root: Path  # the directory holding the generated package

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{PACKAGE}.{name}")

    def call(self, operation: str, **arguments: Any) -> tuple[Any, Any]:
        """Call an operation through the generated client: (the parsed model, the raw JSON)."""
        client = self.module("client").Client(base_url=self.base, raise_on_unexpected_status=True)
        with client:
            response = self.module(f"api.{OPERATIONS[operation]}").sync_detailed(client=client, **arguments)
        return response.parsed, orjson.loads(response.content)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    root = tmp_path_factory.mktemp("client")
    port = free_port()
    build(REPO / "content", root / "dist", base_url=f"http://127.0.0.1:{port}")
    (root / "config.json").write_bytes(orjson.dumps({"post_hooks": []}))  # no ruff needed
    result = subprocess.run(
        [console_script("openapi-python-client"), "generate", "--path", str(root / "dist" / "openapi.json"),
         "--output-path", str(root / "generated" / PACKAGE), "--meta", "none", "--config", str(root / "config.json")],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(root / "generated"))
    try:
        with running_server(root / "dist", port) as base:
            yield Generated(base, result.stdout + result.stderr, root / "generated")
    finally:
        sys.path.remove(str(root / "generated"))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_generator_skips_nothing(generated: Generated) -> None:
    # openapi-python-client exits 0 even when it drops schemas or endpoints; it says so in its output
    assert "Warning" not in generated.output and "Unable to" not in generated.output, generated.output
    for module in OPERATIONS.values():
        generated.module(f"api.{module}")  # each operation's module imports (none names a dropped model)


def test_names_with_filters_paging_and_one_name(generated: Generated) -> None:
    models = generated.module("models")
    first, raw = generated.call("listNames", category=models.ListNamesCategory("tiere"),
                                mood=models.ListNamesMood("verspielt"), limit=2, offset=1)
    assert isinstance(first, models.NameList) and first.to_dict() == raw
    assert (first.limit, first.offset, len(first.items)) == (2, 1, 2) and first.total > 3
    assert all("tiere" in item.categories and "verspielt" in item.moods for item in first.items)
    following, raw = generated.call("listNames", category=models.ListNamesCategory("tiere"),
                                    mood=models.ListNamesMood("verspielt"), limit=2, offset=3)
    assert httpx.get(first.next_url).json() == raw  # `nextUrl` is the page the client asks for next
    assert {i.slug for i in first.items}.isdisjoint(i.slug for i in following.items)

    name, raw = generated.call("getName", slug=first.items[0].slug)
    assert isinstance(name, models.Name) and name.to_dict() == raw
    assert name.title == first.items[0].title and isinstance(name.date_published, dt.date)
    assert name.license_ == "CC BY 4.0" and isinstance(name.faq[0], models.FaqItem)


def test_an_unknown_name_is_parsed_as_the_error_model(generated: Generated) -> None:
    models = generated.module("models")
    error, raw = generated.call("getName", slug="gibt-es-nicht")
    assert isinstance(error, models.Error) and error.to_dict() == raw
    assert error.error.code == models.ErrorErrorCode.NOT_FOUND and "gibt-es-nicht" in error.error.message


def test_categories_search_and_status(generated: Generated) -> None:
    models = generated.module("models")
    categories, raw = generated.call("listCategories")
    assert isinstance(categories, models.CategoryList) and categories.to_dict() == raw
    assert categories.total == len(categories.items) > 5

    category, raw = generated.call("getCategory", slug=categories.items[0].slug)
    assert isinstance(category, models.Category) and category.to_dict() == raw
    assert category.names and all(isinstance(n, models.NameSummary) for n in category.names)

    found, raw = generated.call("searchNames", q="maus", limit=3)
    assert isinstance(found, models.SearchResults) and found.to_dict() == raw
    assert found.query == "maus" and 0 < len(found.items) <= 3 and found.items[0].score > 0

    status, raw = generated.call("getStatus")
    assert isinstance(status, models.Status) and status.status == models.StatusStatus.OK
    assert status.timestamp == dt.datetime.fromisoformat(raw.pop("timestamp"))  # parsed, not just copied
    assert {k: v for k, v in status.to_dict().items() if k != "timestamp"} == raw
    assert status.names > 100 and status.categories == categories.total


def test_ask_in_both_shapes(generated: Generated) -> None:
    models = generated.module("models")
    flat, raw = generated.call("nlAsk", body=models.AskFlatRequest(query="Was bedeutet Spatzl?", limit=3))
    assert isinstance(flat, models.AskResponse) and flat.to_dict() == raw
    assert flat.field_meta.result_count == len(flat.result) <= 3 and flat.result[0].type_ == "DefinedTerm"
    nlweb, raw = generated.call("nlAsk", body=models.AskNLWebRequest(
        query=models.AskNLWebQuery(text="Was bedeutet Spatzl?"), limit=3), prefer_streaming=False)
    assert isinstance(nlweb, models.AskResponse) and nlweb.to_dict() == raw
    assert [r.url for r in nlweb.result] == [r.url for r in flat.result]


def test_mcp_tools_list(generated: Generated) -> None:
    models = generated.module("models")
    answer, raw = generated.call("mcpInvoke", body=models.JsonRpcRequest(jsonrpc="2.0", id=7, method="tools/list"))
    assert isinstance(answer, models.JsonRpcResponse) and answer.to_dict() == raw
    assert answer.id == 7 and answer.error is generated.module("types").UNSET
    assert {tool["name"] for tool in answer.result["tools"]} == {"search", "list_names", "get_name",
                                                                 "list_categories"}
