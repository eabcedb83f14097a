"""Events from the difference between two dists: which, with which field paths, and with which ids."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from runtime.builds.dist import Dist
from runtime.webhooks.derive import Plan, Record, dist_items, plan_events
from tests.runtime.webhooks.support import EVENT_SCHEMAS, Site


class Snapshots:
    """A snapshot kept in memory, as the stores keep it: derive each new build of a site against it."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.records: dict[str, Record] = {}
        self.derive(baseline=True)

    def derive(self, *, baseline: bool = False, now: float = 1_800_000_000.0) -> list[dict]:
        self.site.build()
        dist = Dist.load(self.site.dist)
        plan: Plan = plan_events(self.records, dist_items(dist), base_url=dist.site.base_url, now=now,
                                 baseline=baseline)
        self.records.update(plan.records)
        events = [orjson.loads(draft.body) for draft in plan.events]
        for draft, event in zip(plan.events, events):
            assert (draft.id, draft.type) == (event["id"], event["type"])
            assert list(EVENT_SCHEMAS[event["type"]].iter_errors(event)) == [], event
        return events


@pytest.fixture
def snapshots(tmp_path: Path) -> Snapshots:
    return Snapshots(Site(tmp_path))


def test_the_first_build_is_the_baseline_without_events(tmp_path: Path) -> None:
    site = Site(tmp_path)
    plan = plan_events({}, dist_items(Dist.load(site.dist)), base_url="http://testserver", now=0, baseline=True)
    assert plan.events == []
    assert sorted(k for k in plan.records if k.startswith("e:")) == ["e:aeffchen", "e:apfel", "e:oelprinz",
                                                                    "e:ohrwurm", "e:schnucki", "e:zuckerstueck"]


def test_an_unchanged_build_derives_nothing(snapshots: Snapshots) -> None:
    assert snapshots.derive() == []


def test_an_edit_names_the_changed_field_paths(snapshots: Snapshots) -> None:
    site = snapshots.site
    site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
    site.edit("apfel", "variants: [Apfellein]", "variants: [Apfellein, Äpfelchen]")
    site.edit("apfel", "answer: Unter Paaren wirkt Apfel liebevoll", "answer: Unter Paaren klingt Apfel liebevoll")
    site.edit("apfel", "lastReviewed: 2026-11-01", "lastReviewed: 2026-11-23")
    [event] = snapshots.derive()
    assert event["type"] == "entry.updated" and event["id"].startswith("evt_")
    assert event["created"] == "2027-01-15T08:00:00Z"
    assert event["data"] == {"slug": "apfel", "title": "Apfel", "url": "http://testserver/names/apfel/",
                             "lastReviewed": "2026-11-23",
                             "changes": ["meaning", "variants[1]", "faq[1].answer", "lastReviewed"]}


def test_a_removed_list_item_is_a_change_too(snapshots: Snapshots) -> None:
    snapshots.site.edit("apfel", "variants: [Apfellein]", "variants: []")
    [event] = snapshots.derive()
    assert event["data"]["changes"] == ["variants[0]"]


def test_a_new_entry_is_published_and_joins_its_categories(snapshots: Snapshots) -> None:
    slug = snapshots.site.add("Hasi", categories="tiere, lustig")
    events = snapshots.derive()
    assert [(e["type"], e["data"]["slug"]) for e in events] == [
        ("entry.published", "hasi"), ("category.updated", "tiere"), ("category.updated", "neutral"),
        ("category.updated", "lustig")]  # neutral: the alias of gender alle, which Hasi has
    assert events[0]["data"] == {"slug": slug, "title": "Hasi", "url": "http://testserver/names/hasi/",
                                 "datePublished": "2026-01-15", "lastReviewed": "2026-11-01",
                                 "categories": ["tiere", "lustig"]}
    assert events[1]["data"] == {"slug": "tiere", "title": "Tiere", "url": "http://testserver/categories/tiere/",
                                 "action": "edited", "changes": [], "added": ["hasi"], "removed": []}


def test_an_entry_that_leaves_and_comes_back_is_a_new_change_with_a_new_id(snapshots: Snapshots) -> None:
    site = snapshots.site
    site.add("Hasi")
    first = snapshots.derive()[0]
    text = site.entry("hasi").read_text(encoding="utf-8")
    site.entry("hasi").unlink()
    left = snapshots.derive()
    # it leaves its theme (klassiker) and the alias of its gender (neutral: gender alle)
    assert [(e["type"], e["data"]["removed"]) for e in left] == [("category.updated", ["hasi"])] * 2
    site.entry("hasi").write_text(text, encoding="utf-8")
    again = snapshots.derive()[0]
    assert again["type"] == "entry.published" and again["data"] == first["data"]
    assert again["id"] != first["id"]  # the same content, but another change: subscribers must not drop it


def test_a_category_edit_and_a_new_category(snapshots: Snapshots) -> None:
    categories = snapshots.site.content / "categories.yml"
    text = categories.read_text(encoding="utf-8")
    assert "title: Tiere\n" in text
    categories.write_text(text.replace("title: Tiere\n", "title: Tierisch\n", 1), encoding="utf-8")
    [event] = snapshots.derive()
    assert event["data"] == {"slug": "tiere", "title": "Tierisch", "url": "http://testserver/categories/tiere/",
                             "action": "edited", "changes": ["title"], "added": [], "removed": []}


def test_ids_come_from_the_change_so_replicas_agree(tmp_path: Path) -> None:
    """Two replicas with stores of their own that saw the same builds derive the same ids (and bodies,
    but for `created`)."""
    one, two = Snapshots(Site(tmp_path / "one")), Snapshots(Site(tmp_path / "two"))
    for replica in (one, two):
        replica.site.edit("apfel", "meaning: Ein verspielter", "meaning: Ein zärtlicher")
        replica.site.add("Hasi")
    first, second = one.derive(now=1_800_000_000.0), two.derive(now=1_800_000_099.0)
    assert [e["id"] for e in first] == [e["id"] for e in second] and len(first) == 4  # Hasi joins two categories
    assert [e["data"] for e in first] == [e["data"] for e in second]


def test_a_build_for_another_base_url_changes_no_entry(snapshots: Snapshots) -> None:
    snapshots.site.base_url = "https://kosenamen.example"
    assert snapshots.derive() == []
