"""The CDN's `_redirects` with a runtime origin: what is proxied, in which order, and that no query a
rule could misread gets a precomputed page. tests/test_netlify.py runs the same rules in Netlify's emulator."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
import pytest
from click.testing import CliRunner

from petgen.cli.main import cli
from petgen.contract.resources import LIST_PARAMS
from petgen.emit.redirects import DYNAMIC, SIGNING_SECRET_ENV, parse_runtime_origin, render_redirects
from tests.conftest import REPO

ORIGIN = "https://runtime.kosenamen.example"


def rules_of(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def routes_of(dist: Path) -> dict[str, dict]:
    return orjson.loads((dist / "_manifest.json").read_bytes())["routes"]


def netlify_target(rules: list[list[str]], path: str, query: str) -> str | None:
    """The target Netlify's engine picks, as netlify-redirector matches (petgen/emit/redirects.py lists the rules;
    tests/test_netlify.py checks them through the real one): the first rule for the path whose named
    parameters are all present with their values (`:name` takes any), other parameters ignored, the last
    of a repeated one counting. None of these paths is a file, so no rule is shadowed."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    for rule in rules:
        conditions = [part.split("=", 1) for part in rule[1:-2]]
        if rule[0] == path and all(name in params and (value.startswith(":") or params[name] == value)
                                   for name, value in conditions):
            return rule[-2]
    return None


@pytest.mark.parametrize("fixture", ["dist", "big_dist"])
def test_a_known_query_gets_its_own_page_or_the_runtime(fixture: str, request: pytest.FixtureRequest) -> None:
    """Every combination of the list parameters, precomputed values and others: a query whose parameters are
    all known, each once, gets exactly its precomputed page, else the runtime; never a page that ignores
    one of its parameters (the old rules gave `?category=tiere&limit=5` the unfiltered category page)."""
    routes = routes_of(request.getfixturevalue(fixture))
    rules = rules_of(render_redirects(routes, ORIGIN))
    precomputed = {frozenset(parse_qsl(route.partition("?")[2])): "/" + info["file"]
                   for route, info in routes.items() if route.startswith("/api/names?")}  # bare: the runtime's
    seen = {name: {value for query in precomputed for n, value in query if n == name} for name in LIST_PARAMS}
    values = {name: sorted(seen[name])[:2] + ["other", "7"] for name in LIST_PARAMS}
    assert seen["category"] and seen["mood"] and (seen["offset"] or fixture == "dist")
    checked = files = 0
    for size in range(4):  # precomputed pages name at most two filters and an offset; all bigger sets go alike
        for names in itertools.combinations(LIST_PARAMS, size):
            for chosen in itertools.product(*(values[name] for name in names)):
                query = list(zip(names, chosen))
                expected = precomputed.get(frozenset(query))
                for order in (query, query[::-1]):
                    target = netlify_target(rules, "/api/names", urlencode(order))
                    assert target is not None, order
                    if expected:
                        assert target == expected, (order, target)
                    else:  # the runtime, with every parameter: a target naming them all, or the query as it came
                        assert target.startswith(ORIGIN + "/api/names"), (order, target)
                        forwarded = [name for name, _ in parse_qsl(urlsplit(target).query)]
                        assert forwarded in ([], list(names)), (order, target)
                    checked += 1
                files += expected is not None
    assert checked > 300 and files >= 4


def test_everything_else_reaches_the_runtime_as_it_came(dist: Path) -> None:
    """Unknown parameters alone (a typo), none at all, a malformed query: the rule naming no parameter, whose
    target has no query string, so Netlify passes the request's on for the runtime's 400 or answer."""
    rules = rules_of(render_redirects(routes_of(dist), ORIGIN))
    for query in ("", "catgory=tiere", "x", "limit", "category"):
        assert netlify_target(rules, "/api/names", query) == f"{ORIGIN}/api/names"
    assert ["/api/names", f"{ORIGIN}/api/names", "200!"] in rules
    assert not [rule for rule in rules if rule[0] == "/api/names" and rule[-2].startswith("/")
                and len(rule) == 3], "no bare rule may serve a file: it would match every query"


def test_dynamic_routes_are_forced_proxies_before_anything_else(dist: Path) -> None:
    rules = rules_of(render_redirects(routes_of(dist), ORIGIN))
    proxied = {rule[0]: rule for rule in rules if rule[-2].startswith(ORIGIN)}
    for path in ("/api/status", "/api/search", "/ask", "/mcp", "/webhooks", "/webhooks/*"):
        rule = proxied[path]
        assert rule[-1] == "200!" and rules.index(rule) < 10, rule  # forced, and ahead of every file rule
        assert rule[-2] == ORIGIN + path.replace("/*", "/:splat")
    assert not [rule for rule in rules if rule[0] == "/api/status" and not rule[-2].startswith(ORIGIN)], \
        "the static copy of the status must never answer: the live status is the runtime's"
    assert ["/_manifest.json", "/404.html", "404!"] in rules and ["/_data/*", "/404.html", "404!"] in rules
    assert ["/_routes.pack", "/404.html", "404!"] in rules


def test_a_splat_never_sends_a_bare_path_to_its_trailing_slash(dist: Path) -> None:
    """`/x/*` also matches `/x` (empty splat) and would proxy it to `/x/`, which the runtime answers with a 308
    back to `/x`: a redirect loop. Every splat proxy has the bare path's rule before it."""
    rules = rules_of(render_redirects(routes_of(dist), ORIGIN))
    splats = [rule for rule in rules if rule[0].endswith("/*") and rule[-2].startswith(ORIGIN)]
    assert len(splats) >= 4
    for rule in splats:
        bare = rule[0][:-2]
        assert [bare, ORIGIN + bare, rule[-1]] in rules[:rules.index(rule)], rule


def test_every_clean_url_still_rewrites_to_its_file(dist: Path) -> None:
    routes = routes_of(dist)
    text = render_redirects(routes, ORIGIN)
    for route, info in routes.items():
        if "?" not in route and route.startswith("/api/") and route not in ("/api/names", "/api/status"):
            assert f"\n{route} /{info['file']} 200\n" in text


def test_signed_proxies_sign_every_rule_to_the_runtime_and_nothing_else(dist: Path) -> None:
    """`Sign=VAR` ends each proxy rule (Netlify's redirect parser reads it as netlify.toml's `signed = "VAR"`);
    rules to files stay as they were, in the same order."""
    plain, signed = (rules_of(render_redirects(routes_of(dist), ORIGIN, signed=sign)) for sign in (False, True))
    assert len(plain) == len(signed)
    proxies = 0
    for before, after in zip(plain, signed):
        if before[-2].startswith(ORIGIN + "/"):
            assert after == [*before, f"Sign={SIGNING_SECRET_ENV}"]
            proxies += 1
        else:
            assert after == before
    assert proxies >= 10
    assert "Sign=" not in render_redirects(routes_of(dist), None, signed=True)  # no runtime origin, no proxies


def test_the_build_signs_when_the_secret_is_in_its_environment(content: Path, tmp_path: Path) -> None:
    runner, out = CliRunner(), tmp_path / "dist"
    args = ["build", "--content", str(content), "--out", str(out)]
    result = runner.invoke(cli, args, env={"PETGEN_RUNTIME_ORIGIN": ORIGIN, SIGNING_SECRET_ENV: "k" * 32})
    assert result.exit_code == 0, result.output
    assert f"Proxy rules to {ORIGIN}: signed with the secret in {SIGNING_SECRET_ENV}." in result.output
    assert f"/ask {ORIGIN}/ask 200! Sign={SIGNING_SECRET_ENV}\n" in (out / "_redirects").read_text()
    assert orjson.loads((out / "_manifest.json").read_bytes())["signed_proxies"] is True
    assert "k" * 32 not in (out / "_redirects").read_text()  # the name of the variable, never its value
    result = runner.invoke(cli, args, env={"PETGEN_RUNTIME_ORIGIN": ORIGIN, SIGNING_SECRET_ENV: ""})
    assert result.exit_code == 0 and "not signed" in result.output
    assert "Sign=" not in (out / "_redirects").read_text()
    assert "signed_proxies" not in orjson.loads((out / "_manifest.json").read_bytes())
    result = runner.invoke(cli, args, env={"PETGEN_RUNTIME_ORIGIN": ORIGIN, SIGNING_SECRET_ENV: "too short"})
    assert result.exit_code == 1
    assert f"Error: {SIGNING_SECRET_ENV} must be at least 32 bytes long, not 9" in result.output


@pytest.mark.parametrize(("value", "origin"), [
    ("https://api.example.org", "https://api.example.org"), ("https://api.example.org/", "https://api.example.org"),
    (" http://127.0.0.1:8765 ", "http://127.0.0.1:8765"), ("", None), (None, None),
])
def test_runtime_origin(value: str | None, origin: str | None) -> None:
    assert parse_runtime_origin(value) == origin


@pytest.mark.parametrize("value", ["api.example.org", "ftp://api.example.org", "https://api.example.org/v1",
                                   "https://api.example.org?x=1", "https://user:pw@api.example.org",
                                   "https://api.example.org:99999", "https://api example.org", "https://"])
def test_runtime_origin_refuses_what_is_not_one(value: str) -> None:
    with pytest.raises(ValueError, match="is not an origin: write scheme://host"):
        parse_runtime_origin(value)


def test_build_option_and_environment(content: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "dist"
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(out), "--runtime-origin",
                                 ORIGIN + "/"])
    assert result.exit_code == 0, result.output
    first = {name: (out / name).read_bytes() for name in ("_manifest.json", "_redirects")}
    assert orjson.loads(first["_manifest.json"])["runtime_origin"] == ORIGIN
    assert f"/ask {ORIGIN}/ask 200!\n".encode() in first["_redirects"]
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(out)],
                           env={"PETGEN_RUNTIME_ORIGIN": ORIGIN})
    assert result.exit_code == 0, result.output
    assert {name: (out / name).read_bytes() for name in first} == first  # same inputs, same bytes
    result = runner.invoke(cli, ["build", "--content", str(content), "--out", str(out)],
                           env={"PETGEN_RUNTIME_ORIGIN": "api.example.org"})
    assert result.exit_code == 2
    assert result.output.endswith("Error: Invalid value for '--runtime-origin': 'api.example.org' is not an origin: "
                                  "write scheme://host[:port], e.g. https://api.example.org\n")


def test_netlify_build_without_a_runtime_origin_fails(tmp_path: Path) -> None:
    """On Netlify (NETLIFY=true) `python build.py` refuses to publish a site whose dynamic routes would 404."""
    env = {k: v for k, v in os.environ.items() if k != "PETGEN_RUNTIME_ORIGIN"} | {"NETLIFY": "true"}
    result = subprocess.run([sys.executable, str(REPO / "build.py")], cwd=tmp_path, env=env, capture_output=True,
                            text=True, check=False, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: PETGEN_RUNTIME_ORIGIN is not set.")
    assert not (tmp_path / "dist").exists()


def test_dynamic_list_matches_the_runtime() -> None:
    """The routes proxied here are the ones only the runtime serves (runtime/app.py's dynamic paths)."""
    from runtime.app import DYNAMIC_PATHS, POST_PATHS

    # Netlify matches a rule's path with or without a trailing slash: /ask covers /ask/ too.
    assert DYNAMIC_PATHS - {"/api/names"} <= set(DYNAMIC) and {p.rstrip("/") for p in POST_PATHS} <= set(DYNAMIC)
