"""Validate loaded entries against the vocabularies, each other and the content guide.

Hard rules (the schema) are errors. The guide's soft rules (lengths, keyword lists, examples
that show the name, repeated sentences, IPA characters) are warnings, which `--strict` turns into
errors. Placeholder text (TODO, FIXME, Lorem …, as `petgen new` writes) is always an error: a
half-written entry must never be published.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from operator import itemgetter
from pathlib import Path

import numpy as np

from petgen.build.cache import EntryMemo
from petgen.build.dist import unit_key
from petgen.content.findings import KINDS, Rules, checked
from petgen.content.model import (
    FACETS,
    SUPRAREGIONAL,
    Category,
    Entry,
    Facets,
    Mood,
)
from petgen.content.phrasewords import (
    BREAK,
    SPACED_BREAK,
    TITLE_MARK,
    WORD_HASHES,
    joined_prose,
    names,
    prose,
    word_ids,
)
from petgen.content.problems import Problems
from petgen.content.text import slugify, word_count, word_runs
from petgen.content.vocabularies import check_aliases, check_entry, check_facets, found_nothing, vocabulary_problems
from petgen.search.index import words, words_each

EXAMPLES = 4
CATEGORIES_PER_ENTRY = (1, 4)
MOODS_PER_ENTRY = (1, 4)
FAQ_ITEMS = (2, 3)
KEYWORDS = (4, 12)
ORIGIN_WORDS = (60, 180)
USAGE_WORDS = (40, 150)
MIN_ENTRIES_PER_CATEGORY = 8
RELATIONSHIPS_PER_ENTRY = (1, 4)
CAUTION_CHARS = 240
# Voice: no phrase of this many words (the title replaced by a placeholder) in more entries than this.
PHRASE_WORDS = 5
MAX_PHRASE_ENTRIES = 12
SIGN_BATCH = 128  # entries whose phrases are hashed together: the array operations paid once, the arrays small

# IPA letters and diacritics used for German and common loanwords (no slashes or brackets).
IPA_CHARS = frozenset(
    "abdefhijklmnoprstuvwxyz"
    "ɐɑɒæɛəɪʊʏøœɔʌɜçŋʃʒʁʀɾɹχʔθðɡɲʎʝβɣʋɫɨʉɯɘɵɤɞʕħɦɬɮɭɳɽʂʐʈɖɟʑɕ"
    "ːˑˈˌ\u032f\u0303\u0329\u0325\u02b0\u02b7\u0361. \u203f"
)
PLACEHOLDER = re.compile(r"\b(TODO|FIXME|TBD|XXX|lorem ipsum|lorem)\b", re.IGNORECASE)
# A cheap test before the regex: one of its words in the text's UTF-8 bytes with ASCII letters lowercased, as in the
# text lowercased (no other letter lowercases to one of theirs but `İ`, to `i` and a combining dot, and `K`, to `k`).
_PLACEHOLDER_WORDS = (b"todo", b"fixme", b"tbd", b"xxx", b"lorem")
# A sentence ends at . ! ? … before a capital or an opening quote, but not after an ordinal ("18. Jahrhundert").
SENTENCE_END = re.compile(r"(?<=[.!?…])(?<!\d\.)\s+(?=[A-ZÄÖÜ„\"»*_])")
def fold(text: str) -> str:
    """Fold for loose comparison, exactly as the search engine folds: case, umlauts and their ae/oe/ue
    spellings, accents, punctuation, runs of spaces."""
    return " ".join(words(text))


def fold_each(texts: Sequence[str]) -> list[str]:
    """`fold` of each text, in one pass over all of them (`words_each`)."""
    return list(map(" ".join, words_each(list(texts))))


def validate(entries: list[Entry], categories: list[Category], moods: list[Mood], problems: Problems,
             files: set[str] | None = None, facets: Facets | None = None,
             phrases: Callable[[list[Entry]], Sequence[tuple[str, Sequence[Entry]]]] | None = None,
             keys: dict[str, str] | None = None, cache_root: Path | None = None, order: list[str] | None = None,
             ) -> None:
    """Check entries against the vocabularies and each other (`check_entry_alone` ran at parse time).

    `files` are the slugs of every entry file, also those that failed to load: a link to one of them
    is not reported again (its own errors say what is wrong). `phrases` finds the repeated phrases (the
    build's updates the last build's count: petgen/content/phrases.py). With `keys` (slug -> the key of its
    entry file), `order` (the entries' keys) and the build cache's `cache_root`, what the checks of each entry
    found is kept there, and a later build checks again only what a change can affect (petgen/content/findings.py).
    """
    themes = {c.slug for c in categories if c.facet is None}
    aliases = {c.slug: c for c in categories if c.facet is not None}
    mood_slugs = {m.slug for m in moods}
    vocabularies = {name: set(facets.slugs(name)) for name in FACETS} if facets else {}
    check_aliases(list(aliases.values()), vocabularies, problems)
    context = unit_key(
        *sorted(themes), *sorted(mood_slugs), *(f"{slug}={c.facet}" for slug, c in sorted(aliases.items())),
        *(f"{name}={sorted(values)}" for name, values in sorted(vocabularies.items())))

    def full() -> list[Problems]:
        found = [Problems() for _ in range(KINDS)]
        slugs = {e.slug for e in entries} | (files or set())
        check_vocabularies(entries, themes, mood_slugs, aliases, vocabularies, slugs, found[0],
                           EntryMemo(cache_root, "checks", context) if keys else None, keys or {})
        check_variants(entries, found[1])
        check_gender_families(entries, found[2])
        check_repeated_sentences(entries, found[3])
        return found

    rules = Rules(context, lambda entry, slugs: vocabulary_problems(entry, themes, mood_slugs, slugs, aliases,
                                                                    vocabularies),
                  variant_problems, gender_problems, sentence_problems, lambda e: e.name_keys or name_keys(e),
                  _sentences_of)
    for found in checked(entries, order, cache_root, files, rules, full):
        problems.extend(found)
    # The line of the `usage` of a phrase's first entry, kept by its file's key: else the rest of that entry is loaded.
    usage = EntryMemo(cache_root, "usage", "") if keys and len(keys) == len(entries) else None
    check_repeated_phrases(entries, problems, phrases(entries) if phrases is not None else None,
                           (lambda e: usage.get(keys.get(e.slug), lambda: e.line_of("usage"))) if usage else None)
    if usage is not None:
        usage.save()


def check_vocabularies(entries: list[Entry], themes: set[str], moods: set[str], aliases: dict[str, Category],
                       vocabularies: dict[str, set[str]], slugs: set[str], problems: Problems,
                       memo: EntryMemo | None, keys: dict[str, str]) -> None:
    """Every entry against the vocabularies, and its links (`memo`: the results of the last build's, by the key
    of the entry file, among `keys`)."""
    # An entry's results depend on the others only through the slugs its `related` names: while all exist, they
    # are those of the last build (`memo`, by the entry file's key) if the entry file is unchanged.
    alone = [memo is not None and slugs.issuperset(entry.related) for entry in entries]
    quiet = found_nothing(entries, themes, moods, slugs, vocabularies)
    for entry, kept, nothing in zip(entries, alone, quiet):
        if not kept and not nothing:
            check_entry(entry, themes, moods, slugs, problems, aliases=aliases)
            if vocabularies:
                check_facets(entry, vocabularies, problems)
    if memo is not None:
        kept_entries = [entry for entry, kept in zip(entries, alone) if kept]
        kept_quiet = [nothing for nothing, kept in zip(quiet, alone) if kept]
        found = memo.get_all([keys.get(entry.slug) for entry in kept_entries], lambda i: [] if kept_quiet[i] else
                             vocabulary_problems(kept_entries[i], themes, moods, slugs, aliases, vocabularies))
        for entry, made in zip(kept_entries, found):
            if made:
                problems.extend(p if p.path == entry.path else replace(p, path=entry.path) for p in made)
        memo.save()


def _count(entry: Entry, key: str, values: list, bounds: tuple[int, int], problems: Problems, *, warning: bool = False) -> None:
    low, high = bounds
    if not low <= len(values) <= high:
        want = f"exactly {low}" if low == high else f"{low}–{high}"
        problems.add(entry.path, entry.line_of(key), f"{key} has {len(values)} item{'s' if len(values) != 1 else ''}; "
                     f"{want} expected", warning=warning)


def check_gender_families(entries: list[Entry], problems: Problems) -> None:
    """Related entries (a word family) agree on `gender`, unless the entry says why in `genderNote`."""
    by_slug = {e.slug: e for e in entries}
    for entry in entries:
        gender_problems(entry, by_slug.get, problems)


def gender_problems(entry: Entry, slugged: Callable[[str], Entry | None], problems: Problems) -> None:
    """`check_gender_families` of one entry (`slugged`: the last entry with a slug)."""
    if entry.genderNote:
        return
    for slug in entry.related:
        other = slugged(slug)
        if other is not None and other.gender != entry.gender and not other.genderNote:
            problems.add(entry.path, entry.line_of("gender"), f"gender '{entry.gender}' differs from the related "
                         f"entry '{slug}' ({other.gender})", "make the word family agree, or say in genderNote "
                         "why this name is used differently")
            break


def entry_words(entry: Entry) -> list[list[str]]:
    """The folded words (`search.index.words`) of the entry's title, variants, keywords, meaning and examples, found
    in one pass: the search terms are made of the first four fields' (`document_terms`, in its fields' order), the
    checks read the names' and the examples' (`check_entry_alone`)."""
    return words_each([entry.title, *entry.variants, *entry.keywords, entry.meaning, *entry.examples])


def check_entry_alone(entry: Entry, problems: Problems, found: list[list[str]] | None = None) -> None:
    """Rules one entry can be checked against on its own (run in the parse workers; `sign_entries` then
    computes what the checks across entries compare). `found`: `entry_words(entry)`, if made already."""
    path = entry.path
    found = found if found is not None else entry_words(entry)
    names = len(entry.variants) + 1
    entry.name_keys = tuple(map(" ".join, found[:names]))  # `name_keys`, compared across entries later, in `validate`
    examples = list(map(" ".join, found[names + len(entry.keywords) + 1:]))  # each example folded, as `fold`
    expected = slugify(entry.title)
    if entry.slug != expected:
        problems.add(path, entry.line_of("title"), f"file name '{entry.slug}.md' is not the slug of its title "
                     f"'{entry.title}'", f"rename the file to '{expected}.md'")
    _count(entry, "examples", entry.examples, (EXAMPLES, EXAMPLES), problems)
    _count(entry, "categories", entry.categories, CATEGORIES_PER_ENTRY, problems)
    _count(entry, "moods", entry.moods, MOODS_PER_ENTRY, problems)
    _count(entry, "faq", entry.faq, FAQ_ITEMS, problems)
    _count(entry, "relationship", entry.relationship, RELATIONSHIPS_PER_ENTRY, problems)
    if not entry.region:
        problems.add(path, entry.line_of("region"), "region is empty", f"write [{SUPRAREGIONAL}] or the regions "
                     "where the name is at home")
    if entry.caution is not None and (len(entry.caution) > CAUTION_CHARS or len(SENTENCE_END.split(entry.caution)) > 1):
        problems.add(path, entry.line_of("caution"), "caution should be one sentence (at most "
                     f"{CAUTION_CHARS} characters)", "say when not to use the name, in one sentence", warning=True)
    if entry.lastReviewed < entry.datePublished:
        problems.add(path, entry.line_of("lastReviewed"), f"lastReviewed {entry.lastReviewed} is before "
                     f"datePublished {entry.datePublished}")

    # Soft rules from the content guide (placeholders excepted: see the module docstring).
    _count(entry, "keywords", entry.keywords, KEYWORDS, problems, warning=True)
    if entry.keywords and not any(_ascii_words(k) for k in entry.keywords):
        problems.add(path, entry.line_of("keywords"), "keywords have no English (ASCII-only) term",
                     "add English glosses such as 'sweetheart', 'bear', 'cuddly'", warning=True)
    for key, bounds in (("origin", ORIGIN_WORDS), ("usage", USAGE_WORDS)):
        count = word_count(getattr(entry, key))
        if not bounds[0] <= count <= bounds[1]:
            heading = "Herkunft" if key == "origin" else "Verwendung"
            problems.add(path, entry.line_of(key), f"'## {heading}' has {count} words; {bounds[0]}–{bounds[1]} expected",
                         warning=True)
    bad_ipa = sorted({c for c in entry.ipa if c not in IPA_CHARS})
    if bad_ipa:
        shown = " ".join(f"'{c}' (U+{ord(c):04X})" for c in bad_ipa)
        problems.add(path, entry.line_of("ipa"), f"ipa contains characters outside the IPA set: {shown}",
                     "no slashes or brackets; use IPA letters such as ɛ ə ʁ ç ː ˈ", warning=True)
    forms = name_forms(entry)
    for i, example in enumerate(examples):
        if not any(all(word in example for word in form) for form in forms):  # `mentions`, the examples folded at once
            problems.add(path, entry.line_of(f"examples[{i}]"), f"example {i + 1} does not contain '{entry.title}' "
                         "or one of its variants", warning=True)
    everything = "\n".join([entry.title, entry.pronunciation, entry.ipa, *entry.variants, *entry.keywords, *entry.related,
                            entry.meaning, entry.origin, entry.usage, *entry.examples,
                            *(text for item in entry.faq for text in (item["question"], item["answer"]))])
    lowered = everything.encode("utf-8", "surrogatepass").lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS) and PLACEHOLDER.search(everything.lower()):
        reported: set[tuple[int, str]] = set()  # a list written on one line is reported once
        for key, text in _texts(entry, all_fields=True):
            match = PLACEHOLDER.search(text)
            field, line = key.split("[")[0], entry.line_of(key)
            if match and (line, field) not in reported:
                reported.add((line, field))
                word = match.group(0)
                problems.add(path, line, f"placeholder text '{word}' in {field}",
                             f"replace the {word} text with the entry's real content (petgen new writes "
                             "placeholders to fill in)")


def _ascii_words(keyword: str) -> bool:
    return keyword.isascii() and any(part.isalpha() for part in keyword.split())


def _texts(entry: Entry, *, all_fields: bool = False) -> Iterable[tuple[str, str]]:
    """The entry's prose (for repeated sentences); with `all_fields`, every text (for placeholders)."""
    yield "title", entry.title
    if all_fields:
        yield "pronunciation", entry.pronunciation
        yield "ipa", entry.ipa
        for key in ("variants", "keywords", "related"):
            for i, value in enumerate(getattr(entry, key)):
                yield f"{key}[{i}]", value
    yield "meaning", entry.meaning
    yield "origin", entry.origin
    yield "usage", entry.usage
    for i, example in enumerate(entry.examples):
        yield f"examples[{i}]", example
    for i, item in enumerate(entry.faq):
        yield f"faq[{i}].question", item["question"]
        yield f"faq[{i}].answer", item["answer"]


def name_keys(entry: Entry) -> tuple[str, ...]:
    """The title and each variant, folded (computed once at parse time, for `check_variants`)."""
    return tuple(fold_each([entry.title, *entry.variants]))


def name_forms(entry: Entry) -> list[list[str]]:
    """The name and its variants as folded word stems (`Süße` → `suss`, so `Süßer` matches)."""
    forms = []
    for key in entry.name_keys or name_keys(entry):
        words = key.split()
        if words:
            forms.append([w[:-1] if len(w) > 4 and w[-1] in "en" else w for w in words])
    return forms


def mentions(text: str, forms: list[list[str]]) -> bool:
    """True if every word of one form occurs in the text (inside compounds too)."""
    folded = fold(text)
    return any(all(word in folded for word in form) for form in forms)


def check_variants(entries: list[Entry], problems: Problems) -> None:
    """A variant of one entry must never be another entry's title; siblings go into `related`."""
    keys = [entry.name_keys or name_keys(entry) for entry in entries]
    titles = {key[0]: entry for entry, key in zip(entries, keys)}
    shared = titles.keys() & {variant for key in keys for variant in key[1:]}  # most entries have none of them
    if shared:
        for entry, key in zip(entries, keys):
            if not shared.isdisjoint(key[1:]):
                variant_problems(entry, key, titles.get, problems)


def variant_problems(entry: Entry, key: tuple[str, ...], titled: Callable[[str], Entry | None],
                     problems: Problems) -> None:
    """`check_variants` of one entry (`key`: its `name_keys`; `titled`: the last entry with a title key)."""
    for i, variant in enumerate(entry.variants):
        other = titled(key[i + 1])
        if other is not None and other is not entry:
            problems.add(entry.path, entry.line_of(f"variants[{i}]"), f"variant '{variant}' is the title of "
                         f"another entry ({other.path})", f"remove it from variants and add '{other.slug}' to related")


_WORD_CHAR = re.compile(r"\w")
_BARE_TOKEN = re.compile(r" [^\w ]+(?= )")  # a token without a letter or digit (`–`, `...`), spaces around


def has_five_words(text: str) -> bool:
    """True if five tokens in a row of `text` (tokens separated by single spaces, as `sentence_keys` writes
    them) contain a letter or digit (linear time; the equivalent regex backtracks badly on short sentences)."""
    if len(text.split(" ", 4)) < 5:
        return False
    if _BARE_TOKEN.search(f" {text} ") is None:  # the common case: every token has a letter or digit
        return True
    run = 0
    for token in text.split():
        if _WORD_CHAR.search(token) is None:
            run = 0
            continue
        run += 1
        if run == 5:
            return True
    return False


def _sentences(entry: Entry) -> tuple[list[str], list[str], list[str]]:
    """Every sentence of the entry's prose (FAQ questions left out) with the field it is in and its comparison
    key (casefolded, runs of spaces as one, without the final punctuation), as three lists."""
    keys: list[str] = []
    sentences: list[str] = []
    for key, text in _texts(entry):
        if key == "title" or (key.startswith("faq") and text.endswith("?")):
            continue
        found = SENTENCE_END.split(text)
        sentences += found
        keys += [key] * len(found)
    folded = "\x00".join(sentences).casefold().split("\x00")  # casefolding is per character
    if len(folded) != len(sentences):  # the separator itself in a text
        folded = [sentence.casefold() for sentence in sentences]
    return keys, sentences, [" ".join(text.split()).rstrip(".!?… ") for text in folded]


def sentence_keys(entry: Entry) -> list[tuple[str, str, str]]:
    """(field, comparison key, sentence) for every sentence of five or more words, once per entry."""
    result = []
    own: set[str] = set()
    for key, sentence, norm in zip(*_sentences(entry)):
        if norm in own or not has_five_words(norm):
            continue
        own.add(norm)
        result.append((key, norm, sentence))
    return result


def _text_hash(text: str) -> int:
    """A stable signed 64-bit hash of a text (the same in every process): its BLAKE2b digest of 8 bytes read as
    a little-endian integer (`sentence_hashes` packs the digests themselves, `_sentences_of` reads them so)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little", signed=True)


def sentence_hashes(entry: Entry, norms: list[str] | None = None) -> bytes:
    """The comparison keys of `sentence_keys`, hashed and packed: what the parse workers keep of the sentences
    (a few bytes each instead of three strings); `check_repeated_sentences` reads the sentences themselves
    again only in the entries that share one. `norms`: those of `_sentence_norms(entry)`, if found already."""
    norms = list(dict.fromkeys(norms if norms is not None else _sentence_norms(entry)))  # without the fields
    if _BARE_TOKEN.search(f" {' '.join(norms)} ") is None:  # the common case: every token has a letter or digit
        kept = [norm for norm in norms if norm.count(" ") >= 4]  # five tokens (single spaces, none at either end)
    else:
        kept = [norm for norm in norms if has_five_words(norm)]
    blake2b = hashlib.blake2b
    return b"".join([blake2b(norm.encode(), digest_size=8).digest() for norm in kept])


# Where `SENTENCE_END` splits, found with the mark before it: a mark (not the full stop of an ordinal), spaces, a
# capital. Tried at the marks only (the look-behind of `SENTENCE_END` is tried at every character), one mark at a
# time (an expression that starts with one character finds its candidates a few times faster than one that starts
# with a class of four; no two ends overlap, and none reaches into another's context, so the order does not
# matter); the comparison keys drop a sentence's final marks anyway.
_MARK_AND_SENTENCE_END = re.compile(r"[.!?…](?<!\d\.)\s+(?=[A-ZÄÖÜ„\"»*_])")
_SENTENCE_ENDS = tuple((mark, re.compile(re.escape(mark) + r"(?<!\d\.)\s+(?=[A-ZÄÖÜ„\"»*_])")) for mark in ".!?…")


def _cut_sentences(text: str) -> str:
    """`_MARK_AND_SENTENCE_END.sub("\\x00", text)`: each sentence end (its mark and spaces) as a NUL."""
    for mark, end in _SENTENCE_ENDS:
        if mark in text:
            text = end.sub("\x00", text)
    return text


def _sentence_norms(entry: Entry) -> list[str]:
    """The comparison keys of `_sentences(entry)`, found in all the entry's texts at once."""
    texts = [entry.meaning, entry.origin, entry.usage, *entry.examples]
    for item in entry.faq:
        texts += [text for text in (item["question"], item["answer"]) if not text.endswith("?")]
    found = _norms_of(texts)
    return found if found is not None else _sentences(entry)[2]


def _norms_of(texts: list[str]) -> list[str] | None:
    """The comparison keys of the sentences of `texts`, one after another (as `_sentences` makes them), or None if
    a text holds the NUL put between them. Each sentence end becomes a NUL before casefolding (a sentence starts
    with a capital); runs of spaces become one space in all the texts at once, unless there are none."""
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:
        return None
    return _keys_of(_cut_sentences(joined).casefold(), texts)


def _folded_prose(entry: Entry) -> tuple[str, list[str] | None]:
    """The entry's prose (`joined_prose`) with each sentence end a NUL (`_cut_sentences`), casefolded, and the
    comparison keys of its sentences (`_sentence_norms`) found in it (None if a text holds a NUL or BREAK): the prose
    casefolded once for the sentences and the phrases (whose words a NUL for a mark and spaces leaves as they are)."""
    texts = prose(entry)
    joined = SPACED_BREAK.join(texts)
    if joined.count(BREAK) != len(texts) - 1 or "\x00" in joined:
        return _cut_sentences(joined_prose(entry)).casefold(), None
    folded = _cut_sentences(joined).casefold()  # no sentence end reaches over a BREAK: as each text cut alone
    parts = folded.split(BREAK)
    first_faq = 3 + len(entry.examples)  # `_sentence_norms` leaves out the FAQ's texts that end with a question mark
    kept = parts[:first_faq] + [part for part, text in zip(parts[first_faq:], texts[first_faq:])
                                if not text.endswith("?")]
    return folded, _keys_of("\x00".join(kept), texts)


def _keys_of(cut: str, texts: list[str]) -> list[str]:
    """The comparison keys of the sentences of `cut` (`_norms_of`: texts with each sentence end a NUL, casefolded,
    joined by NULs, maybe with spaces around them), `texts` the texts it was made of (or more: the keys are the same
    whether or not runs of spaces are made one space here, but for the spaces at either end, which are stripped)."""
    if "  " in cut or not all(map(str.isprintable, texts)):  # the only space that is printable is " "
        cut = " ".join(cut.split())
    return [text.strip(" ").rstrip(".!?… ") for text in cut.split("\x00")]


def sign_entries(entries: list[Entry]) -> None:
    """Compute what the checks across entries compare, for a batch of entries (a parse worker's chunk): the
    hashes of each entry's sentences and of its phrases."""
    folded = []
    for entry in entries:
        text, norms = _folded_prose(entry)
        entry.sentences = sentence_hashes(entry, norms)
        folded.append(text)
    for start in range(0, len(entries), SIGN_BATCH):
        batch = entries[start:start + SIGN_BATCH]
        for entry, phrases in zip(batch, _phrase_hashes(batch, folded[start:start + SIGN_BATCH])):
            entry.phrases = phrases


def check_repeated_sentences(entries: list[Entry], problems: Problems) -> None:
    """No two entries share a sentence (examples, FAQ answers, meaning, origin, usage)."""
    hashes, owners = _all_hashes(entries, _sentences_of, "<i8")
    values, counts = counted(hashes)
    shared, at = _among(hashes, values[counts > 1])
    if not len(at):
        return
    order = np.argsort(shared, kind="stable")  # `at` ascends: the first of each value is its first entry's
    first = order[_starts(shared[order])]
    first_owner = dict(zip(shared[first].tolist(), owners[at[first]].tolist()))
    for i in sorted(set(owners[at].tolist())):  # the entries with a shared sentence, in order
        sentence_problems(entries[i], lambda value, i=i: entries[first_owner.get(value, i)], problems)


def sentence_problems(entry: Entry, first: Callable[[int], Entry], problems: Problems) -> None:
    """`check_repeated_sentences` of one entry (`first`: the first entry with a sentence's hash)."""
    for key, norm, sentence in sentence_keys(entry):
        other = first(_text_hash(norm))
        if other is not entry:
            problems.add(entry.path, entry.line_of(key), f"sentence also used in {other.path}: "
                         f"'{sentence.strip()[:80]}'", "write every sentence for this entry", warning=True)


def _sentences_of(entry: Entry) -> bytes:
    return entry.sentences or sentence_hashes(entry)  # packed little-endian 64-bit hashes


def _among(hashes: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hashes that are among `wanted` (sorted), and where they are in `hashes` (ascending)."""
    if not len(wanted):
        return wanted, np.zeros(0, dtype=np.int64)
    slot = np.minimum(np.searchsorted(wanted, hashes), len(wanted) - 1)
    at = np.flatnonzero(wanted[slot] == hashes)
    return hashes[at], at


def _all_hashes(entries: list[Entry], of: Callable[[Entry], bytes], dtype: str | type = np.int64,
                ) -> tuple[np.ndarray, np.ndarray]:
    """Every entry's hashes (`of` an entry: its packed 64-bit hashes, as `dtype`) one after another, and the
    number of the entry each belongs to; read as one array (not one array per entry)."""
    blobs = [of(entry) for entry in entries]
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)) // 8
    hashes = np.frombuffer(b"".join(blobs), dtype=dtype).astype(np.int64, copy=False)  # no copy where that is int64
    return hashes, np.repeat(np.arange(len(entries), dtype=np.int64), lengths)


def _flat_phrase_words(entry: Entry) -> list[str]:
    """The folded words of the entry's prose texts (meaning, origin, usage, examples, FAQ), one after another
    with BREAK between two texts, the entry's own name and variants replaced by one placeholder, so formulas
    repeated around different names compare equal: `phrasewords.word_ids` word by word, as strings (for the text of
    a phrase the check reports)."""
    found = word_runs(joined_prose(entry).casefold(), BREAK)  # casefolding is per character: the same as per text
    named = names(entry)
    firsts = {name[0] for name in named if name}
    if firsts.isdisjoint(found):
        return found
    starts: list[int] = []  # where a name may start: list.index finds each first word without a Python loop
    for first in firsts:
        at = -1
        with contextlib.suppress(ValueError):
            while True:
                at = found.index(first, at + 1)
                starts.append(at)
    out: list[str] = []
    i = 0
    for j in sorted(starts):
        if j < i:
            continue
        for name in named:
            if name and found[j:j + len(name)] == name:
                out += found[i:j]
                out.append(TITLE_MARK)
                i = j + len(name)
                break
    out += found[i:]
    return out


# A phrase's hash mixes stable 64-bit hashes of its words (each word hashed once per process), so that every
# five-word window of a text is hashed in a few array operations instead of one BLAKE2b call per window.
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                 0xFF51AFD7ED558CCD][:PHRASE_WORDS], dtype=np.uint64)


def _word_hashes(words: list[str]) -> np.ndarray:
    known = WORD_HASHES
    if len(words) < 2:  # `itemgetter` of one key returns the value, not a tuple
        return np.fromiter(map(known.__getitem__, words), dtype=np.uint64, count=len(words))
    return np.fromiter(itemgetter(*words)(known), dtype=np.uint64, count=len(words))  # every lookup in C


def _window_hashes(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """`_id_window_hashes` of words given as strings."""
    return _id_window_hashes(_word_hashes(words))


def _id_window_hashes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stable 63-bit hash of every run of PHRASE_WORDS words (`ids`: their hashes) that spans no BREAK (0),
    and where each run starts: one pass over all the words of many texts."""
    count = len(ids) - PHRASE_WORDS + 1
    if count <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    mixed = np.zeros(count, dtype=np.uint64)
    for k in range(PHRASE_WORDS):
        mixed = (mixed ^ ids[k:k + count]) * _MIX[k]
    mixed ^= mixed >> np.uint64(31)
    breaks = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(ids == 0, out=breaks[1:])
    starts = np.flatnonzero(breaks[PHRASE_WORDS:] == breaks[:count])  # no break from the start to the end
    return (mixed[starts] >> np.uint64(1)).astype(np.int64), starts


def _phrase_hashes(entries: list[Entry], folded: list[str] | None = None) -> list[bytes]:
    """Each entry's distinct phrases of PHRASE_WORDS words, hashed: sorted 64-bit integers, packed (a tenth
    of the memory of a tuple of ints, in the parse workers, the cache and the build); computed for all the
    entries at once, so that the array operations are paid once per batch, not once per entry (`folded`: see
    `word_ids`)."""
    ids, bounds = word_ids(entries, folded)
    hashes, starts = _id_window_hashes(ids)
    owners = np.searchsorted(bounds, starts, side="right") - 1
    order = np.lexsort((hashes, owners))
    hashes, owners = hashes[order], owners[order]
    keep = np.ones(len(hashes), dtype=bool)
    keep[1:] = (hashes[1:] != hashes[:-1]) | (owners[1:] != owners[:-1])
    hashes, owners = hashes[keep], owners[keep]
    cuts = np.searchsorted(owners, np.arange(len(entries) + 1)).tolist()
    return [hashes[cuts[i]:cuts[i + 1]].tobytes() for i in range(len(entries))]


def phrase_hashes(entry: Entry) -> bytes:
    """The packed phrase hashes of one entry (`_phrase_hashes`)."""
    return _phrase_hashes([entry])[0]


def _phrases_of(entry: Entry) -> bytes:
    return entry.phrases or phrase_hashes(entry)


def repeated_phrases(entries: list[Entry], *, top: int | None = None,
                     minimum: int = MAX_PHRASE_ENTRIES + 1) -> list[tuple[str, list[Entry]]]:
    """Phrases in at least `minimum` entries, most widespread first: (phrase with `X` for the name, entries)."""
    return [(text, [entries[i] for i in users]) for _, text, users in phrase_users(entries, top=top, minimum=minimum)]


def phrase_users(entries: list[Entry], *, top: int | None = None,
                 minimum: int = MAX_PHRASE_ENTRIES + 1) -> list[tuple[int, str, list[int]]]:
    """`repeated_phrases` as (the phrase's hash, its text, the positions of its entries)."""
    return users_of(entries, *phrase_counts(entries), top=top, minimum=minimum)


def phrase_counts(entries: list[Entry]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every entry's phrase hashes one after another, the position of the entry each is of, and every phrase
    hash (sorted) with the number of entries it is in."""
    hashes, owners = _all_hashes(entries, _phrases_of)  # an entry's phrases are distinct
    return hashes, owners, *counted(hashes)


def counted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_counts=True)`, without the import of numpy.ma (80 ms) that numpy 2's makes when
    first called."""
    ordered = np.sort(values)
    starts = _starts(ordered)
    return ordered[starts], np.diff(np.append(starts, len(ordered)))


def _starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of an ascending array starts."""
    return np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(ordered) else ordered[:0]


def users_of(entries: list[Entry], hashes: np.ndarray, owners: np.ndarray, values: np.ndarray, counts: np.ndarray,
             *, top: int | None = None, minimum: int = MAX_PHRASE_ENTRIES + 1) -> list[tuple[int, str, list[int]]]:
    """`phrase_users` from `phrase_counts`."""
    order = np.argsort(-counts, kind="stable")
    wanted = [int(i) for i in order if counts[i] >= minimum][:top]
    if not wanted:
        return []
    chosen = values[wanted]  # most widespread first
    by_value = np.argsort(chosen)
    among, at = _among(hashes, chosen[by_value])
    ranks = by_value[np.searchsorted(chosen[by_value], among)]
    mine = at[np.argsort(ranks.astype(np.int16 if len(wanted) < 2**15 else np.int64), kind="stable")]
    bounds = np.searchsorted(np.sort(ranks), np.arange(len(wanted) + 1))  # by phrase, each one's entries in order
    users = [owners[mine[bounds[r]:bounds[r + 1]]].tolist() for r in range(len(wanted))]
    texts = phrase_texts(entries, [(users[r][0], value) for r, value in enumerate(chosen.tolist())])
    return [(value, texts[value], users[r]) for r, value in enumerate(chosen.tolist())]


def phrase_texts(entries: list[Entry], wanted: list[tuple[int, int]]) -> dict[int, str]:
    """The text of each phrase hash of `wanted` (entry position, hash), looked up in that entry's words."""
    texts: dict[int, str] = {}
    firsts: dict[int, set[int]] = {}
    for owner, value in wanted:
        firsts.setdefault(owner, set()).add(value)
    for owner, phrases in sorted(firsts.items()):
        found = _flat_phrase_words(entries[owner])
        for h, i in zip(*(a.tolist() for a in _window_hashes(found))):
            if h in phrases and h not in texts:
                texts[h] = " ".join("X" if w == TITLE_MARK else w for w in found[i:i + PHRASE_WORDS])
    return texts


def check_repeated_phrases(entries: list[Entry], problems: Problems,
                           found: Sequence[tuple[str, Sequence[Entry]]] | None = None,
                           usage: Callable[[Entry], int] | None = None) -> None:
    """No phrase of five words (the name replaced by a placeholder) in more than MAX_PHRASE_ENTRIES entries
    (`found`: `repeated_phrases(entries)`, if made already; `usage`: the line of an entry's usage, if not `line_of`)."""
    for phrase, users in found if found is not None else repeated_phrases(entries):
        first = users[0]
        shown = ", ".join(e.slug for e in users[:5]) + (" …" if len(users) > 5 else "")
        line = usage(first) if usage else first.line_of("usage")
        problems.add(first.path, line, f"the phrase '{phrase}' is in {len(users)} entries "
                     f"(at most {MAX_PHRASE_ENTRIES}): {shown}", "say what is particular to each name instead of a "
                     "formula; `petgen stats` lists the most repeated phrases", warning=True)
