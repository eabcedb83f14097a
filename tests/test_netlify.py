"""The Netlify profile for real: the Netlify CLI's emulator (`netlify dev --offline`, pinned in deploy/) serves
the real content's dist/ with the project's netlify.toml, its proxy rules pointed at a live runtime. The same
contract checks run through it and against the runtime directly, and must agree; what a CDN answers
differently is pinned in the last tests, as docs/deploy.md states it.

`npm ci --prefix deploy` installs the CLI (.ci/run does); without it these tests fail and say so.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import os
import shutil
import signal
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest

from petgen.build.pipeline import build
from petgen.contract.security import SECURITY_HEADERS
from petgen.emit.redirects import SIGNING_SECRET_ENV
from tests.conftest import REPO
from tests.runtime.test_server import free_port, running_server

pytestmark = pytest.mark.slow

NETLIFY = REPO / "deploy" / "node_modules" / ".bin" / "netlify"
LOOPBACK = REPO / "deploy" / "loopback.cjs"
STARTUP = 120  # seconds; the CLI loads ~1,200 packages and usually answers within 5 to 20
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
APP = "https://app.example"
SECRET = "the-site-s-proxy-signing-secret-0123456789abcdef"  # in the emulator's and the runtime's environment


@dataclass(frozen=True)
class Site:
    cdn: str  # the emulator, which is also the public base URL the dist was built for
    runtime: str
    dist: Path


def emulator_env(home: Path) -> dict[str, str]:
    """No Netlify account, site or token; no proxy server between the emulator and the runtime; no telemetry,
    update checks or browser (CI=true); its config and caches in a directory of the test's own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NETLIFY") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"), "XDG_STATE_HOME": str(home / "state"), "CI": "true",
            "BROWSER": "none", "NO_UPDATE_NOTIFIER": "1", "NODE_OPTIONS": f"--require {LOOPBACK}"}


@contextlib.contextmanager
def netlify_dev(project: Path, port: int, home: Path) -> Iterator[str]:
    """`netlify dev` serving `project`/dist with `project`/netlify.toml on a loopback port; yields its URL."""
    if not NETLIFY.exists():
        pytest.fail("the Netlify CLI is not installed: run `npm ci --prefix deploy` (.ci/run does)")
    log = (home / "netlify-dev.log").open("wb")
    process = subprocess.Popen(
        [str(NETLIFY), "dev", "--offline", "--internal-disable-edge-functions", "--dir", "dist", "--port", str(port),
         "--skip-gitignore", "--no-open"],
        cwd=project, env=emulator_env(home), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)  # its own process group: the CLI starts helpers, stopped with it
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while not _answers(base + "/robots.txt"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"netlify dev did not start:\n{(home / 'netlify-dev.log').read_text()[-3000:]}")
            time.sleep(0.25)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        log.close()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The real content built as `python build.py` builds it on Netlify: strict, with the emulator's URL as base
    URL, the live runtime as runtime origin and signed proxy rules; the project's netlify.toml beside it."""
    root = tmp_path_factory.mktemp("netlify")
    project, home = root / "project", root / "home"
    project.mkdir()
    home.mkdir()
    shutil.copy(REPO / "netlify.toml", project / "netlify.toml")
    # The secret the emulator signs proxied requests with: a site's environment variable on Netlify; `netlify dev`
    # reads it from .env (not from its own environment) and warns, unsigned, without it.
    (project / ".env").write_text(f"{SIGNING_SECRET_ENV}={SECRET}\n")
    cdn_port, runtime_port = free_port(), free_port()
    cdn = f"http://127.0.0.1:{cdn_port}"
    build(REPO / "content", project / "dist", base_url=cdn, strict=True,
          runtime_origin=f"http://127.0.0.1:{runtime_port}", signed_proxies=True)
    with running_server(project / "dist", runtime_port, rate_limit=100_000, netlify_signing_secret=SECRET) as runtime, \
            netlify_dev(project, cdn_port, home) as proxied:
        yield Site(proxied, runtime, project / "dist")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.request.url, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"]["code"] == code and body["error"]["message"] and body["license"]
    assert body["error"]["docs"].startswith("http")
    return body


# The contract checks: each asserts what the contract promises and returns what the other side must equal.

def check_list_and_pagination(client: httpx.Client, public: str) -> Any:
    first = client.get("/api/names")
    assert first.status_code == 200 and first.headers["content-type"] == "application/json; charset=utf-8"
    page = first.json()
    assert len(page["items"]) == 200 and page["total"] > 200 and page["license"] == "CC BY 4.0"
    assert page["nextUrl"] == f"{public}/api/names?offset=200"
    second = client.get(path_of(page["nextUrl"]))
    rest = second.json()
    assert len(rest["items"]) == page["total"] - 200 and rest["nextUrl"] is None
    assert not {i["slug"] for i in page["items"]} & {i["slug"] for i in rest["items"]}
    return first.content, second.content


def check_filters(client: httpx.Client, public: str) -> Any:
    bodies = []
    for query, category, mood in (("category=tiere", "tiere", None), ("mood=kuschelig", None, "kuschelig"),
                                  ("category=tiere&mood=kuschelig", "tiere", "kuschelig"),
                                  ("mood=kuschelig&category=tiere", "tiere", "kuschelig")):
        response = client.get(f"/api/names?{query}")
        assert response.status_code == 200, query
        items = response.json()["items"]
        assert items and all((category is None or category in i["categories"]) and
                             (mood is None or mood in i["moods"]) for i in items)
        bodies.append(response.content)
    assert bodies[2] == bodies[3]  # parameter order does not matter
    return bodies


def check_pages_that_were_not_precomputed(client: httpx.Client, public: str) -> Any:
    """Any limit and offset: the runtime's page, never a precomputed page that ignores them."""
    everything = client.get("/api/names?category=tiere").json()["items"]
    bodies = []
    for query in ("category=tiere&limit=5&offset=3", "offset=3&limit=5&category=tiere",
                  "limit=5&category=tiere&offset=3"):
        page = client.get(f"/api/names?{query}").json()
        assert [i["slug"] for i in page["items"]] == [i["slug"] for i in everything[3:8]], query
        assert (page["limit"], page["offset"]) == (5, 3)
        assert page["nextUrl"] == f"{public}/api/names?category=tiere&limit=5&offset=8"
        bodies.append(orjson.dumps(page))
    assert len(set(bodies)) == 1
    small = client.get("/api/names?limit=7")
    first_seven = client.get("/api/names").json()["items"][:7]
    assert [i["slug"] for i in small.json()["items"]] == [i["slug"] for i in first_seven]
    later = client.get("/api/names?offset=200&limit=3").json()
    assert later["offset"] == 200 and len(later["items"]) == 3
    return bodies[0], small.content, orjson.dumps(later)


def check_invalid_parameters(client: httpx.Client, public: str) -> Any:
    return [envelope(client.get(f"/api/names?{query}"), 400, "bad_request")
            for query in ("limit=0", "catgory=tiere", "category=nope", "category=Tiere", "category=tiere&limit=201",
                          "category=tiere&mood=kuschelig&offset=-1", "limit=5&limit=6", "offset=1e2")]


def check_one_name(client: httpx.Client, public: str) -> Any:
    response = client.get("/api/names/baerchen")
    assert response.status_code == 200 and response.json()["url"] == f"{public}/names/baerchen/"
    head = client.head("/api/names/baerchen")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == response.headers["content-type"] == "application/json; charset=utf-8"
    moved = client.get("/api/names/B%C3%A4rchen", follow_redirects=False)
    assert moved.status_code == 301 and moved.headers["location"] == "/api/names/baerchen"
    assert client.get(response.json()["url"].removeprefix(public)).status_code == 200  # its human page
    return response.content, moved.headers["location"]


def check_not_found(client: httpx.Client, public: str) -> Any:
    return [envelope(client.get(path), 404, "not_found") for path in ("/api/names/gibtsnicht", "/api/nope",
                                                                      "/api/categories/nope", "/.well-known/nope")]


def check_search(client: httpx.Client, public: str) -> Any:
    response = client.get("/api/search?q=baerchn&limit=3")
    assert response.status_code == 200 and response.json()["items"][0]["slug"] == "baerchen"
    return response.content, envelope(client.get("/api/search"), 400, "bad_request")


def check_ask(client: httpx.Client, public: str) -> Any:
    response = client.post("/ask", json={"query": "Was bedeutet Spatzl?"})
    assert response.status_code == 200 and response.json()["result"][0]["name"] == "Spatzl"
    events = []
    with client.stream("POST", "/ask", json={"query": "little mouse"}, headers={"prefer": "streaming=true"}) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        for block in stream.read().decode().strip().split("\n\n"):
            fields = dict(line.split(": ", 1) for line in block.splitlines())
            data = orjson.loads(fields["data"])
            data.pop("elapsed_ms", None)
            events.append((fields["event"], data))
    names = [name for name, _ in events]
    assert names[0] == "start" and names[-1] == "complete" and set(names[1:-1]) == {"result"}
    return response.content, events, envelope(client.post("/ask", content=b"nope", headers={
        "content-type": "application/json"}), 400, "bad_request")


def check_mcp(client: httpx.Client, public: str) -> Any:
    def rpc(message: dict[str, Any]) -> dict[str, Any]:
        response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, **message}, headers=MCP_HEADERS)
        assert response.status_code == 200, response.text
        return response.json()

    initialized = rpc({"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                          "clientInfo": {"name": "test", "version": "1"}}})
    assert initialized["result"]["capabilities"]["tools"] is not None
    called = rpc({"method": "tools/call", "params": {"name": "get_name", "arguments": {"slug": "baerchen"}}})
    assert called["result"]["structuredContent"]["slug"] == "baerchen"
    assert called["result"]["structuredContent"]["url"] == f"{public}/names/baerchen/"
    return initialized, called


def check_live_status(client: httpx.Client, public: str) -> Any:
    """The runtime's live status, not the static copy in dist/ (whose timestamp is the newest review date)."""
    response = client.get("/api/status")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok" and response.headers["cache-control"] == "no-store"
    timestamp = dt.datetime.strptime(body.pop("timestamp"), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    assert abs((dt.datetime.now(dt.UTC) - timestamp).total_seconds()) < 300
    return body


def check_conditional_requests(client: httpx.Client, public: str) -> Any:
    """ETag and 304 on a file the CDN serves and on pages the runtime computes. The values may differ between
    the two (a CDN sends its own validator); each side answers its own with 304."""
    statuses = []
    for path in ("/api/names/baerchen", "/api/categories", "/api/names?category=tiere&limit=5", "/api/search?q=maus"):
        response = client.get(path)
        again = client.get(path, headers={"if-none-match": response.headers["etag"]})
        assert again.content == b""
        statuses.append((path, response.status_code, again.status_code))
    return statuses


def check_cors(client: httpx.Client, public: str) -> Any:
    seen = []
    for method, path in (("GET", "/api/names/baerchen"), ("GET", "/api/names?limit=3"), ("GET", "/api/names/nope"),
                         ("GET", "/api/status"), ("POST", "/ask")):
        response = client.request(method, path, headers={"origin": APP},
                                  **({"json": {"query": "Spatzl"}} if method == "POST" else {}))
        assert response.headers.get_list("access-control-allow-origin") == ["*"], path
        assert "ETag" in response.headers["access-control-expose-headers"]
        seen.append((path, response.status_code))
    preflight = client.options("/ask", headers={"origin": APP, "access-control-request-method": "POST",
                                                "access-control-request-headers": "content-type"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-methods"] == "POST"
    return seen


def check_security_headers(client: httpx.Client, public: str) -> Any:
    checked = []
    for path in ("/api/names/baerchen", "/names/baerchen/", "/", "/api/names?limit=3", "/api/names/nope",
                 "/gibt/es/nicht", "/api/status", "/openapi.json"):
        response = client.get(path)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get_list(name) == [value], (path, name, response.headers.get_list(name))
        checked.append((path, response.status_code))
    return checked


CHECKS: list[Callable[[httpx.Client, str], Any]] = [
    check_list_and_pagination, check_filters, check_pages_that_were_not_precomputed, check_invalid_parameters,
    check_one_name, check_not_found, check_search, check_ask, check_mcp, check_live_status,
    check_conditional_requests, check_cors, check_security_headers,
]


@pytest.mark.parametrize("check", CHECKS, ids=[check.__name__.removeprefix("check_") for check in CHECKS])
def test_the_cdn_and_the_runtime_answer_alike(site: Site, check: Callable[[httpx.Client, str], Any]) -> None:
    with httpx.Client(base_url=site.cdn, timeout=30) as cdn, httpx.Client(base_url=site.runtime, timeout=30) as rt:
        assert check(cdn, site.cdn) == check(rt, site.cdn)


def test_every_query_on_the_list_gets_the_runtime_s_answer(site: Site) -> None:
    """Known parameters with precomputed and other values, in both orders, some invalid: byte for byte what the
    runtime says, whether the CDN served a file or proxied."""
    values = {"category": ["tiere", "freunde", "nope", ""], "mood": ["kuschelig", "frech", "x"],
              "limit": ["200", "5", "0"], "offset": ["0", "200", "0200", "7"]}
    queries = [""]
    for size in (1, 2, 3, 4):
        for names in itertools.combinations(values, size):
            combinations = itertools.product(*(values[n] for n in names))
            for chosen in itertools.islice(combinations, 0, None, 3 if size > 2 else 1):  # every third of the many
                pairs = [f"{n}={v}" for n, v in zip(names, chosen)]
                queries += ["&".join(pairs), "&".join(reversed(pairs))]
    queries += ["catgory=tiere", "category=tiere&", "category=ti%65re", "x", "&&category=tiere", "limit"]
    with httpx.Client(base_url=site.cdn, timeout=30) as cdn, httpx.Client(base_url=site.runtime, timeout=30) as rt:
        for query in queries:
            through_cdn, direct = cdn.get(f"/api/names?{query}"), rt.get(f"/api/names?{query}")
            assert (through_cdn.status_code, through_cdn.content) == (direct.status_code, direct.content), query
    assert len(queries) > 150


def test_what_the_cdn_answers_differently(site: Site) -> None:
    """docs/deploy.md#what-holds-where, pinned: Netlify matches query parameters by name and ignores others, takes
    the last of a repeated one, ignores a trailing slash; only the runtime knows each client's budget."""
    with httpx.Client(base_url=site.cdn, timeout=30) as cdn, httpx.Client(base_url=site.runtime, timeout=30) as rt:
        tiere = rt.get("/api/names?category=tiere").content
        for query in ("category=tiere&foo=1", "category=natur&category=tiere"):
            assert cdn.get(f"/api/names?{query}").content == tiere  # the CDN: the page of the parameters it knows
            envelope(rt.get(f"/api/names?{query}"), 400, "bad_request")  # the runtime: 400
        routed = cdn.get("/api/names?category=tiere&limit=5&foo=1")  # to the runtime, by the names the CDN knows
        assert routed.content == rt.get("/api/names?category=tiere&limit=5").content
        envelope(rt.get("/api/names?category=tiere&limit=5&foo=1"), 400, "bad_request")
        slash = cdn.get("/api/names/baerchen/", follow_redirects=False)
        assert slash.status_code == 200 and slash.content == rt.get("/api/names/baerchen").content
        assert rt.get("/api/names/baerchen/", follow_redirects=False).status_code == 308
        static, proxied = cdn.get("/api/names/baerchen"), cdn.get("/api/names?limit=3")
        assert "x-ratelimit-limit" not in static.headers and proxied.headers["x-ratelimit-limit"] == "100000"


def test_the_emulator_does_not_enforce_netlify_rate_limits(site: Site) -> None:
    """netlify.toml limits the site to 60 requests a minute per IP; `netlify dev` ignores the rule (production
    Netlify applies it; docs/deploy.md#rate-limits says how to check a deploy)."""
    [rule] = [rule for rule in tomllib.loads((REPO / "netlify.toml").read_text())["redirects"] if "rate_limit" in rule]
    assert rule["rate_limit"] == {"window_limit": 60, "window_size": 60, "aggregate_by": ["ip", "domain"]}
    assert (rule["from"], rule["status"], rule["force"]) == ("/*", 404, False)  # routes nothing a file or rule answers
    with httpx.Client(base_url=site.cdn, timeout=30) as cdn:
        assert {cdn.get("/api/categories").status_code for _ in range(70)} == {200}
        assert cdn.get("/gibt/es/nicht").status_code == 404


def test_netlify_signs_what_it_proxies_so_each_client_has_its_own_budget(site: Site) -> None:
    """The emulator signs every proxied request as Netlify does (X-Nf-Sign: HS256 with the secret in
    PETGEN_NETLIFY_SIGNING_SECRET, issuer `netlify`, 5 minutes), and the runtime verifies it. The emulator sets no
    X-Nf-Client-Connection-Ip (Netlify's edge does, from the connection), so the test sends it in Netlify's place."""
    limit = 100_000

    def remaining(client: httpx.Client, address: str) -> int:
        response = client.get("/api/names?limit=3", headers={"x-nf-client-connection-ip": address})
        assert response.status_code == 200
        return int(response.headers["x-ratelimit-remaining"])

    with httpx.Client(base_url=site.cdn, timeout=30) as cdn, httpx.Client(base_url=site.runtime, timeout=30) as rt:
        alice, bob, mallory = "203.0.113.10", "2001:db8:10:20::1", "203.0.113.12"
        assert remaining(cdn, alice) == limit - 1  # a budget of alice's own, behind the one "edge"
        assert remaining(cdn, alice) == limit - 2
        assert remaining(cdn, bob) == limit - 1
        assert remaining(cdn, "2001:db8:10:20::2") == limit - 2  # bob's /64
        remaining(rt, mallory)  # unsigned, straight to the runtime: counted against the peer, not mallory
        assert remaining(cdn, mallory) == limit - 1  # mallory's own budget was never touched
    assert f"200! Sign={SIGNING_SECRET_ENV}\n" in (site.dist / "_redirects").read_text()
