"""Events from the difference between a loaded dist and the last one seen (the snapshot). Pure functions.

The snapshot keeps, for every entry and category ever seen, a digest of its content, a revision
number and a short hash of every field path (`meaning`, `faq[1].answer`, `variants[0]`), so that an
update names exactly the paths that changed without storing the content itself. Event ids come from
the change itself (type, slug, revision, new digest): two replicas that derive the same change from
the same snapshot derive the same id, and the store keeps each id once. The revision makes an entry
that is removed and published again a new change, with a new id.

`url`, `license` and `licenseUrl` are left out of the comparison: they follow from the site (its base
URL, its license), not from the entry, and a dist built for another base URL changes no entry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from runtime.builds.dist import Dist
from runtime.webhooks.model import iso

NOT_CONTENT = frozenset({"url", "license", "licenseUrl"})
CATEGORY_FIELDS = ("title", "emoji", "description", "moods")  # a category's own fields; `names` is membership


def _hash(data: bytes, size: int = 6) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def flatten(value: Any, prefix: str = "", into: dict[str, str] | None = None) -> dict[str, str]:
    """Every leaf of a JSON value by its path (`faq[1].answer`), with a short hash of its value.

    Empty lists and objects have no leaves: a list that becomes empty shows as its removed items."""
    out = {} if into is None else into
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            flatten(item, f"{prefix}[{index}]", out)
    else:
        out[prefix] = _hash(orjson.dumps(value))
    return out


def changed_paths(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """Paths whose value changed or appeared (in the new order), then those that disappeared."""
    return [p for p, h in new.items() if old.get(p) != h] + [p for p in old if p not in new]


@dataclass(frozen=True)
class Record:
    """The snapshot's memory of one entry or category."""

    digest: str
    rev: int
    paths: dict[str, str]
    title: str = ""
    names: tuple[str, ...] = ()  # a category's entries
    removed: bool = False

    def to_json(self) -> bytes:
        data: dict[str, Any] = {"d": self.digest, "r": self.rev, "p": self.paths, "t": self.title}
        if self.names:
            data["n"] = self.names
        if self.removed:
            data["x"] = 1
        return orjson.dumps(data)

    @classmethod
    def from_json(cls, raw: bytes | str) -> Record:
        data = orjson.loads(raw)
        return cls(data["d"], data["r"], data["p"], data.get("t", ""), tuple(data.get("n", ())), bool(data.get("x")))


@dataclass(frozen=True)
class Draft:
    """An event before the store gives it its place in the order."""

    id: str
    type: str
    body: bytes


@dataclass
class Plan:
    """What one derivation writes, in one transaction: changed snapshot records and the new events."""

    records: dict[str, Record] = field(default_factory=dict)
    events: list[Draft] = field(default_factory=list)


@dataclass(frozen=True)
class Item:
    """An entry or category of the loaded dist, reduced to what is compared."""

    key: str  # "e:<slug>" or "c:<slug>"
    slug: str
    resource: dict[str, Any]
    content: Any  # what the digest and the paths are computed from
    digest: str
    names: tuple[str, ...] = ()


def dist_items(dist: Dist) -> list[Item]:
    """Every entry (in list order), then every category (in the editors' order), of a loaded dist."""
    items = []
    for summary in dist.items:
        slug = summary["slug"]
        resource = orjson.loads(dist.routes[f"/api/names/{slug}"].body)
        content = {k: v for k, v in resource.items() if k not in NOT_CONTENT}
        items.append(Item(f"e:{slug}", slug, resource, content, _hash(orjson.dumps(content), 12)))
    for slug in dist.categories:
        resource = orjson.loads(dist.routes[f"/api/categories/{slug}"].body)
        own = {k: resource[k] for k in CATEGORY_FIELDS if k in resource}
        names = tuple(n["slug"] for n in resource["names"])
        items.append(Item(f"c:{slug}", slug, resource, own, _hash(orjson.dumps([own, names]), 12), names))
    return items


def event_id(event_type: str, slug: str, rev: int, digest: str) -> str:
    return "evt_" + _hash(f"{event_type}\0{slug}\0{rev}\0{digest}".encode(), 12)


def plan_events(previous: Mapping[str, Record], items: list[Item], *, base_url: str, now: float,
                baseline: bool) -> Plan:
    """The snapshot records to write and the events to queue for a dist whose items are `items`.

    A baseline (nothing seen before) records everything and derives no event. Entries that left the
    dist are kept as removed (no event type exists for that; their categories' `removed` says it).
    """
    plan = Plan()
    created = iso(now)
    seen = set()
    for item in items:
        seen.add(item.key)
        old = previous.get(item.key)
        if old is not None and not old.removed and old.digest == item.digest:
            continue
        paths = flatten(item.content)
        rev = old.rev + 1 if old is not None else 1
        title = item.resource.get("title", "")
        plan.records[item.key] = Record(item.digest, rev, paths, title, item.names)
        if baseline:
            continue
        before = None if old is None or old.removed else old  # None: the item is new (again)
        if item.key.startswith("e:"):
            draft = _entry_event(item, rev, created, None if before is None else changed_paths(before.paths, paths))
        else:
            draft = _category_event(item.slug, item.resource["url"], title, rev, item.digest, created,
                                    action="created" if before is None else "edited",
                                    changes=list(paths) if before is None else changed_paths(before.paths, paths),
                                    before=() if before is None else before.names, after=item.names)
        if draft is not None:
            plan.events.append(draft)
    for key, old in previous.items():
        if key in seen or old.removed:
            continue
        gone = replace(old, rev=old.rev + 1, removed=True, names=())
        plan.records[key] = gone
        if key.startswith("c:") and not baseline:
            slug = key[2:]
            plan.events.append(_category_event(slug, f"{base_url}/categories/{slug}/", old.title, gone.rev,
                                               "removed", created, action="deleted", changes=[], before=old.names,
                                               after=()))
    # Entry events first, then the categories whose membership they changed (list order within each)
    plan.events.sort(key=lambda d: d.type == "category.updated")
    return plan


def _entry_event(item: Item, rev: int, created: str, changes: list[str] | None) -> Draft | None:
    r = item.resource
    if changes is None:
        data = {"slug": item.slug, "title": r["title"], "url": r["url"], "datePublished": r.get("datePublished"),
                "lastReviewed": r.get("lastReviewed"), "categories": r.get("categories", [])}
        event_type = "entry.published"
    else:
        if not changes:
            return None  # only a digest collision could get here; nothing to tell
        data = {"slug": item.slug, "title": r["title"], "url": r["url"], "lastReviewed": r.get("lastReviewed"),
                "changes": changes}
        event_type = "entry.updated"
    return _draft(event_type, item.slug, rev, item.digest, created, data)


def _category_event(slug: str, url: str, title: str, rev: int, digest: str, created: str, *, action: str,
                    changes: list[str], before: tuple[str, ...], after: tuple[str, ...]) -> Draft:
    was, now = set(before), set(after)
    data = {"slug": slug, "title": title, "url": url, "action": action, "changes": changes,
            "added": [s for s in after if s not in was], "removed": [s for s in before if s not in now]}
    return _draft("category.updated", slug, rev, digest, created, data)


def _draft(event_type: str, slug: str, rev: int, digest: str, created: str, data: dict[str, Any]) -> Draft:
    event = event_id(event_type, slug, rev, digest)
    return Draft(event, event_type, orjson.dumps({"id": event, "type": event_type, "created": created,
                                                  "data": data}))
