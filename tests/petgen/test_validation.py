"""One test per problem class: exact message, exact line, nothing written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from petgen.build.pipeline import build
from petgen.content.kb import load_knowledge_base
from petgen.content.model import FACETS, SUPRAREGIONAL
from petgen.content.problems import ContentError
from petgen.content.vocabularies import found_nothing, vocabulary_problems
from tests.conftest import entry_text


def problems_for(content: Path, slug: str, text: str, *, strict: bool = False) -> list[str]:
    (content / "names" / f"{slug}.md").write_text(text, encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content, strict=strict)
    return [p.format() for p in info.value.problems]


def replace_line(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


def test_valid_content_loads(content: Path) -> None:
    kb = load_knowledge_base(content, strict=True)
    assert [e.title for e in kb.entries] == ["Äffchen", "Apfel", "ohrwurm", "Ölprinz", "Schnucki", "Zuckerstück"]


def test_unknown_key_is_reported_with_line_and_hint(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 7, "catgories: [tiere]")
    found = problems_for(content, "hasi", text)
    assert f"{content}/names/hasi.md:7: unknown key 'catgories'\n    hint: did you mean 'categories'?" in found
    assert f"{content}/names/hasi.md:1: missing required field 'categories'" in found


def test_yaml_syntax_error_keeps_its_line(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 5, "meaning: [unclosed")
    found = problems_for(content, "hasi", text)
    assert len(found) == 1
    assert found[0].startswith(f"{content}/names/hasi.md:6: YAML syntax error:")


def test_missing_front_matter(content: Path) -> None:
    found = problems_for(content, "hasi", "# Hasi\n\nkein Front Matter\n")
    assert found == [f"{content}/names/hasi.md:1: missing front matter\n"
                     "    hint: the file must start with a line '---', YAML, then '---'"]


def test_wrong_type(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 6, "variants: Hasilein")
    found = problems_for(content, "hasi", text)
    assert found == [f"{content}/names/hasi.md:6: variants must be a list, not str\n"
                     "    hint: write it as variants: [a, b]"]


def test_bad_date(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 20, "datePublished: 15.01.2026")
    found = problems_for(content, "hasi", text)
    assert found == [f"{content}/names/hasi.md:20: datePublished must be a date written YYYY-MM-DD, not "
                     "'15.01.2026'\n    hint: e.g. 2026-11-22"]


def test_impossible_date(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 21, "lastReviewed: 2026-02-30")
    assert problems_for(content, "hasi", text) == [
        f"{content}/names/hasi.md:21: lastReviewed '2026-02-30' is not a real calendar date"]


def test_examples_must_be_exactly_four(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 14, "")
    assert problems_for(content, "hasi", text) == [
        f"{content}/names/hasi.md:10: examples has 3 items; exactly 4 expected"]


def test_unknown_category_and_mood(content: Path) -> None:
    text = entry_text("Hasi", categories="tiere, tierchen", moods="kuschlig")
    found = problems_for(content, "hasi", text)
    assert found == [
        f"{content}/names/hasi.md:7: unknown category 'tierchen'\n    hint: did you mean 'tiere'?",
        f"{content}/names/hasi.md:8: unknown mood 'kuschlig'\n    hint: did you mean 'kuschelig'?",
    ]


def test_file_name_must_be_slug_of_title(content: Path) -> None:
    found = problems_for(content, "Hasi", entry_text("Hasi"))
    assert found == [f"{content}/names/Hasi.md:2: file name 'Hasi.md' is not the slug of its title 'Hasi'\n"
                     "    hint: rename the file to 'hasi.md'"]


def test_duplicate_key(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 4, "title: Hasi")
    found = problems_for(content, "hasi", text)
    assert f"{content}/names/hasi.md:4: duplicate key 'title'\n    hint: remove one of the two" in found


def test_missing_section(content: Path) -> None:
    text = entry_text("Hasi").replace("## Verwendung", "## Benutzung")
    found = problems_for(content, "hasi", text)
    assert f"{content}/names/hasi.md:36: unknown section '## Benutzung'\n    hint: the body has two sections: " \
           "'## Herkunft' and '## Verwendung'" in found
    assert f"{content}/names/hasi.md:27: missing section '## Verwendung'" in found


def test_related_must_exist(content: Path) -> None:
    text = entry_text("Hasi").replace("faq:\n", "related: [schnucky]\nfaq:\n", 1)
    assert problems_for(content, "hasi", text) == [
        f"{content}/names/hasi.md:15: related entry 'schnucky' does not exist\n    hint: did you mean 'schnucki'?"]


def test_variant_must_not_be_another_title(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 6, "variants: [Hasilein, Schnucki]")
    assert problems_for(content, "hasi", text) == [
        f"{content}/names/hasi.md:6: variant 'Schnucki' is the title of another entry "
        f"({content}/names/schnucki.md)\n    hint: remove it from variants and add 'schnucki' to related"]


def test_all_problems_are_listed_before_one_abort(content: Path) -> None:
    (content / "names" / "a.md").write_text(replace_line(entry_text("A"), 7, "catgories: [x]"), encoding="utf-8")
    (content / "names" / "b.md").write_text("kaputt", encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    assert {Path(p.path).name for p in info.value.problems} == {"a.md", "b.md"}
    assert info.value.message == "content has 3 errors; nothing was written."


def test_soft_rules_are_warnings_and_strict_makes_them_errors(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 11, '  - "Guten Morgen, hast du gut geschlafen?"')
    text = replace_line(text, 4, "ipa: /ˈhaːzi/")
    text = replace_line(text, 9, "keywords: [süß, Häschen, Löffel, Öhrchen]")
    (content / "names" / "hasi.md").write_text(text, encoding="utf-8")
    kb = load_knowledge_base(content)  # not strict: loads, with warnings
    assert [p.format() for p in kb.warnings if "hasi" in p.path] == [
        f"{content}/names/hasi.md:4: warning: ipa contains characters outside the IPA set: '/' (U+002F)\n"
        "    hint: no slashes or brackets; use IPA letters such as ɛ ə ʁ ç ː ˈ",
        f"{content}/names/hasi.md:9: warning: keywords have no English (ASCII-only) term\n"
        "    hint: add English glosses such as 'sweetheart', 'bear', 'cuddly'",
        f"{content}/names/hasi.md:11: warning: example 1 does not contain 'Hasi' or one of its variants",
    ]
    found = problems_for(content, "hasi", text, strict=True)
    assert len(found) == 3


def test_lengths_and_repeated_sentences_warn(content: Path) -> None:
    text = entry_text("Hasi")
    text = text.split("## Herkunft")[0] + "## Herkunft\n\nZu kurz.\n\n## Verwendung\n\n" + \
        text.split("## Verwendung\n\n")[1] + "\nIm Beruf sollte man den Namen lieber nicht verwenden.\n"
    other = (content / "names" / "apfel.md")
    other.write_text(other.read_text() + "\nIm Beruf sollte man den Namen lieber nicht verwenden.\n")
    (content / "names" / "hasi.md").write_text(text, encoding="utf-8")
    messages = [p.message for p in load_knowledge_base(content).warnings]
    assert "'## Herkunft' has 2 words; 60–180 expected" in messages
    assert any(m.startswith(f"sentence also used in {content}/names/apfel.md") for m in messages)


def test_a_sentence_in_three_entries_is_reported_in_the_later_two_naming_the_first(content: Path) -> None:
    shared = "\nIm Beruf sollte man den Namen lieber nicht verwenden.\n"
    names = sorted((content / "names").glob("*.md"))[:3]
    for path in names:
        path.write_text(path.read_text(encoding="utf-8") + shared, encoding="utf-8")
    kb = load_knowledge_base(content)
    order = [e.path for e in sorted(kb.entries, key=lambda e: e.path)]
    found = sorted((p.path, p.message) for p in kb.warnings if p.message.startswith("sentence also used"))
    first = min(order)
    message = f"sentence also used in {first}: 'Im Beruf sollte man den Namen lieber nicht verwenden.'"
    assert found == sorted((path, message) for path in order if path in map(str, names) and path != first)


def test_failed_build_writes_nothing(content: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    build(content, out)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    (content / "names" / "kaputt.md").write_text("---\ntitle: [\n---\n", encoding="utf-8")
    with pytest.raises(ContentError):
        build(content, out)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".dist")] == []


def test_taxonomy_problems(content: Path) -> None:
    (content / "moods.yml").write_text("- slug: zaertlich\n  title: zärtlich\n  description: sanft\n  farbe: rot\n")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    found = [p.format() for p in info.value.problems]
    assert f"{content}/moods.yml:4: unknown key 'farbe'" in found
    assert any("unknown mood 'romantisch'" in f and "categories.yml" in f for f in found)


def test_fast_construction_equals_pyyaml() -> None:
    """The fast path builds exactly what PyYAML's safe constructor builds, including the cases it hands back."""
    from petgen.content.model import ContentLoader, _construct

    text = ('a: text\nb: [1, 2.5, true, null, "7"]\nc: {x: 1}\nbase: &b {k: v}\nd:\n  <<: *b\n  z: 0x1F\n'
            'e: 2026-11-22\nf: !!str 12\ng: ~\n')
    fast, slow = ContentLoader(text), ContentLoader(text)
    assert _construct(fast, fast.get_single_node()) == slow.construct_document(slow.get_single_node())


def test_a_broken_entry_does_not_cascade_into_its_relatives(content: Path) -> None:
    (content / "names" / "hasi.md").write_text(replace_line(entry_text("Hasi"), 7, "catgories: [tiere]"))
    linking = entry_text("Hase").replace("faq:\n", "related: [hasi]\nfaq:\n", 1)
    found = problems_for(content, "hase", linking)
    assert not any("hase.md" in f for f in found)  # the link to hasi is fine: hasi's own errors are listed
    assert any("hasi.md:7: unknown key 'catgories'" in f for f in found)


def test_placeholders_in_every_field_are_errors(content: Path) -> None:
    text = replace_line(entry_text("Hasi"), 3, "pronunciation: TODO")
    text = replace_line(text, 9, "keywords: [süß, TBD, fixme, sweetheart]")
    text = replace_line(text, 19, "    answer: Lorem ipsum dolor sit amet.")
    text = text.replace("benutzen vor allem Paare", "XXX benutzen vor allem Paare")
    hint = "\n    hint: replace the {} text with the entry's real content (petgen new writes placeholders to fill in)"
    path = content / "names" / "hasi.md"
    assert [f for f in problems_for(content, "hasi", text) if "placeholder" in f] == [
        f"{path}:3: placeholder text 'TODO' in pronunciation" + hint.format("TODO"),
        f"{path}:9: placeholder text 'TBD' in keywords" + hint.format("TBD"),  # once for the line
        f"{path}:19: placeholder text 'Lorem ipsum' in faq" + hint.format("Lorem ipsum"),
        f"{path}:36: placeholder text 'XXX' in usage" + hint.format("XXX"),  # its section
    ]


@pytest.mark.parametrize("name", ["lexicon.yml", "bots.yml", "site.yml"])
def test_a_config_file_that_is_not_utf8_is_an_error(content: Path, name: str) -> None:
    (content / name).write_bytes(b"bots: []\nfiller: \xff\xfe\n")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    assert f"{content / name}:1: not valid UTF-8 (invalid start byte)\n    hint: save the file as UTF-8" in \
        [p.format() for p in info.value.problems]


def test_a_lexicon_phrase_written_twice_in_a_section_is_an_error(content: Path) -> None:
    """YAML keeps only the last of two equal keys: the first phrase's words would be lost without a word."""
    lexicon = content / "lexicon.yml"
    lexicon.write_text("translations:\n  kitten: [Kätzchen]\n  puppy: [Hase]\n  kitten: [Mieze]\nfiller:\n"
                       "  en: [the]\n  de: [der]\n", encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    assert [p.format() for p in info.value.problems] == [
        f"{lexicon}:4: duplicate key 'translations: kitten'\n    hint: remove one of the two (YAML keeps only the last)"]


def test_an_entry_that_cannot_be_read_is_an_error(content: Path) -> None:
    (content / "names" / "ordner.md").mkdir()
    (content / "names" / "weg.md").symlink_to(content / "nowhere")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content)
    hint = "\n    hint: every names/*.md must be a readable text file"
    assert [p.format() for p in info.value.problems] == [
        f"{content}/names/ordner.md:1: cannot be read (Is a directory){hint}",
        f"{content}/names/weg.md:1: cannot be read (No such file or directory){hint}",
    ]


# ---------------------------------------------------------------------------------------------
# Facets (second edition): relationship, gender, region, language, originCertainty, aliases


@pytest.mark.parametrize("line, value, message", [
    (22, "relationship: [partner, ehe]", "22: unknown relationship 'ehe'\n    hint: allowed: familie, freunde, kind, "
                                         "partner (see facets.yml)"),
    (22, "relationship: []", "22: relationship has 0 items; 1–4 expected"),
    (23, "gender: frau", "23: unknown gender 'frau'\n    hint: allowed: alle, ihn, sie (see facets.yml)"),
    (24, "region: [koeln]", "24: unknown region 'koeln'\n    hint: allowed: bayern-oesterreich, berlin, franken, "
                            "hessen-pfalz, norddeutschland, rheinland, ruhrgebiet, sachsen, schwaben, schweiz, "
                            "ueberregional (see facets.yml)"),
    (24, "region: [ueberregional, berlin]", "24: region lists 'ueberregional' with other regions\n    hint: write "
                                            "either [ueberregional] or the regions where the name is at home"),
    (25, "originCertainty: sicher", "25: unknown originCertainty 'sicher'\n    hint: allowed: belegt, unbekannt, "
                                    "vermutet (see facets.yml)"),
    (25, "language: tuerkish\noriginCertainty: belegt", "25: unknown language 'tuerkish'\n    hint: did you mean "
                                                         "'tuerkisch'?"),
])
def test_facet_values_come_from_their_vocabulary(content: Path, line: int, value: str, message: str) -> None:
    found = problems_for(content, "hasi", replace_line(entry_text("Hasi"), line, value))
    assert found == [f"{content}/names/hasi.md:{message}"]


def test_an_audience_category_is_now_a_facet(content: Path) -> None:
    found = problems_for(content, "hasi", replace_line(entry_text("Hasi"), 7, "categories: [tiere, fuer-sie]"))
    assert found == [f"{content}/names/hasi.md:7: 'fuer-sie' is no longer a category to list: it is derived from "
                     "the gender facet\n    hint: remove it from categories and write gender: sie"]


def test_a_word_family_agrees_on_gender_or_says_why(content: Path) -> None:
    # Apfel (fixture) is used for her; Hasi links to it and is for anyone.
    text = entry_text("Hasi").replace("datePublished:", "related: [apfel]\ndatePublished:")
    found = problems_for(content, "hasi", text)
    assert found == [f"{content}/names/hasi.md:24: gender 'alle' differs from the related entry 'apfel' (sie)\n"
                     "    hint: make the word family agree, or say in genderNote why this name is used differently"]
    noted = text.replace("gender: alle", "gender: alle\ngenderNote: Anders als Apfel auch für Männer gebräuchlich.")
    (content / "names" / "hasi.md").write_text(noted, encoding="utf-8")
    assert load_knowledge_base(content).by_slug["hasi"].genderNote.startswith("Anders als Apfel")


def test_a_formula_in_more_than_twelve_entries_is_reported_once(content: Path) -> None:
    from petgen.content.validate import MAX_PHRASE_ENTRIES

    # The fixture entries share every sentence of their template; name-independent phrases count per entry.
    for i in range(MAX_PHRASE_ENTRIES - 6 + 1):  # 6 fixture entries + 7 more = 13 with the same phrases
        title = f"Kosi{'abcdefg'[i]}"
        (content / "names" / f"kosi{'abcdefg'[i]}.md").write_text(entry_text(title), encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_knowledge_base(content, strict=True)
    phrases = [p.format() for p in info.value.problems if "the phrase" in p.message]
    assert phrases and all("is in 13 entries (at most 12)" in p for p in phrases)
    assert any("'X benutzen vor allem paare'" in p for p in phrases)  # the name stands as X
    assert load_knowledge_base(content).warnings  # not an error without --strict


def test_facets_yml_is_checked(content: Path) -> None:
    facets = (content / "facets.yml").read_text(encoding="utf-8")
    (content / "facets.yml").write_text(facets.replace("gender:", "geschlecht:", 1), encoding="utf-8")
    found = problems_for(content, "hasi", entry_text("Hasi"))
    assert f"{content}/facets.yml:17: unknown facet 'geschlecht'\n    hint: the facets are relationship, gender, " \
           "region, language, originCertainty" in found
    assert f"{content}/facets.yml:1: facet 'gender' must be a non-empty list of values\n    hint: start each value " \
           "with '- slug: …'" in found


def test_the_quick_look_at_all_entries_finds_what_checking_each_finds(content: Path) -> None:
    """`found_nothing` (every entry's vocabularies and links looked at field by field) says an entry has nothing to
    report exactly when `check_entry` and `check_facets` find nothing in it, for entries with one defect of each
    kind."""
    kb = load_knowledge_base(content)
    themes = {c.slug for c in kb.categories if c.facet is None}
    aliases = {c.slug: c for c in kb.categories if c.facet is not None}
    moods = {m.slug for m in kb.moods}
    slugs = {e.slug for e in kb.entries}
    vocabularies = {name: set(kb.facets.slugs(name)) for name in FACETS}
    base = kb.entries[0]
    other = kb.entries[1].slug
    defects = {
        "none": {}, "unknown category": {"categories": [*base.categories, "gibtsnicht"]},
        "category twice": {"categories": [base.categories[0], base.categories[0]]},
        "alias category": {"categories": [*base.categories, next(iter(aliases))]},
        "unknown mood": {"moods": ["gibtsnicht"]}, "mood twice": {"moods": [base.moods[0]] * 2},
        "itself related": {"related": [base.slug]}, "unknown related": {"related": [other, "gibtsnicht"]},
        "unknown gender": {"gender": "gibtsnicht"}, "unknown language": {"language": "gibtsnicht"},
        "region twice": {"region": [base.region[0]] * 2}, "unknown relationship": {"relationship": ["gibtsnicht"]},
        "supraregional and more": {"region": [SUPRAREGIONAL, next(iter(vocabularies["region"] - {SUPRAREGIONAL}))]},
        "related fine": {"related": [other]},
    }
    entries = [replace(base, **fields) for fields in defects.values()]
    quiet = found_nothing(entries, themes, moods, slugs, vocabularies)
    found = [vocabulary_problems(entry, themes, moods, slugs, aliases, vocabularies) for entry in entries]
    assert dict(zip(defects, quiet)) == {name: not problems for name, problems in zip(defects, found)}
    assert quiet.count(True) == 2  # "none" and "related fine": each of the others has a problem
    assert found_nothing(kb.entries, themes, moods, slugs, {}) == [True] * len(kb.entries)
