"""The words of the repeated-phrase check, found in a batch of entries' texts at once, as arrays.

The check compares runs of five words of an entry's prose (`validate._phrase_hashes`): its texts casefolded, their
words as `re.findall(r"\\w+")` finds them, the entry's own name (its title or a variant) replaced by one placeholder
word, each word as a stable 64-bit hash (its BLAKE2b). Made word by word (`validate._flat_phrase_words`, which
finds the text of a phrase the check reports), that is a few hundred Python strings per entry, each looked up in a
dict. Here the texts of a batch are one array of code points: a word is a run of the characters `\\w` matches (a
table, filled as characters are first seen), hashed by a polynomial over its code points in a few array
operations; only the distinct words of the batch are looked up, by that hash, for their BLAKE2b (made once per
process). The polynomial hash only tells a batch's words apart: two distinct words hash alike by a 2**-64
chance, as two phrases do.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from petgen.content.model import Entry

BREAK = "\x01"  # between two texts (and after an entry's last): no phrase spans it, its hash is 0
TITLE_MARK = "\x00"  # stands for the entry's own name in a phrase
SPACED_BREAK = f" {BREAK} "  # a token of its own, as between two words
NAME_WORD = re.compile(r"\w+")


class _WordHashes(dict[str, int]):
    """Word -> its stable 64-bit hash, made on the first lookup of the word (so that every lookup is in C)."""

    def __missing__(self, word: str) -> int:
        value = self[word] = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        return value


WORD_HASHES = _WordHashes({BREAK: 0})  # 0 marks a break (no word's BLAKE2b is 0 but by a 2**-64 chance)

# Whether a code point is part of a token: 1 for what `\w` matches and for BREAK (always between spaces, a token
# of its own), 0 for the rest, -1 where not looked up yet.
_TOKEN_CHAR = np.full(0x110000, -1, dtype=np.int8)
_WORD_CHAR = re.compile(r"\w")
_P = 0x100000001B3  # the polynomial's base (odd: invertible modulo 2**64)
_LENGTH_MIX = np.uint64(0x9E3779B97F4A7C15)
_ENTRY_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
_tables: list[np.ndarray] = [np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64)]  # P^i and P^-i, grown
_BLAKE_OF: dict[int, int] = {}  # a word's polynomial hash -> its hash in WORD_HASHES
MEMO_SIZE = 1 << 20  # words `_BLAKE_OF` remembers (then it starts again)


def prose(entry: Entry) -> list[str]:
    """The texts whose phrases the check compares: meaning, origin, usage, examples, FAQ."""
    texts = [entry.meaning, entry.origin, entry.usage, *entry.examples]
    for item in entry.faq:
        texts += (item["question"], item["answer"])
    return texts


def joined_prose(entry: Entry) -> str:
    """The entry's prose texts with BREAK between them (in a text, the character itself is a space)."""
    texts = prose(entry)
    joined = SPACED_BREAK.join(texts)
    if joined.count(BREAK) != len(texts) - 1:
        joined = SPACED_BREAK.join(text.replace(BREAK, " ") for text in texts)
    return joined


def names(entry: Entry) -> list[list[str]]:
    """The words of the entry's title and variants, casefolded, longest first (the first that matches is replaced)."""
    return sorted((NAME_WORD.findall(name.casefold()) for name in [entry.title, *entry.variants]), key=len,
                  reverse=True)


def word_ids(entries: list[Entry], folded: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's prose words as their hashes (`WORD_HASHES`), its own name as TITLE_MARK, then a BREAK: one array
    for all the entries; and where each entry's words start (one more: the end of the last). `folded`: each entry's
    `joined_prose` casefolded already, with any characters that are no part of a word replaced by others."""
    if folded is None:
        folded = [joined_prose(entry).casefold() for entry in entries]  # casefolding is per character
    pieces = [text + SPACED_BREAK for text in folded]
    text = "".join(pieces)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    token = _token_chars(codes)
    changes = np.flatnonzero(np.diff(token)) + 1  # where a token starts or ends (the text ends with a space)
    if len(token) and token[0]:
        changes = np.concatenate([[0], changes])
    starts, ends = changes[0::2], changes[1::2]
    distinct, inverse, ids = _hashes(text, codes, starts, ends)
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)), out=offsets[1:])
    bounds = np.searchsorted(starts, offsets)  # each entry's first token (one more: the end)
    named = _named(entries, distinct, inverse, ids, bounds)
    if named is not None:
        keep = np.ones(len(ids), dtype=bool)
        at, ends = named
        ids[at] = WORD_HASHES[TITLE_MARK]
        inside = np.bincount(at + 1, minlength=len(ids) + 1) - np.bincount(ends, minlength=len(ids) + 1)
        keep[np.cumsum(inside)[:len(ids)] > 0] = False  # a name's words after its first
        bounds = np.cumsum(np.concatenate([[0], keep]))[bounds]
        ids = ids[keep]
    return ids, bounds


def _token_chars(codes: np.ndarray) -> np.ndarray:
    """1 where a code point is part of a token, else 0 (`_TOKEN_CHAR`, filled for code points not seen before)."""
    found = np.take(_TOKEN_CHAR, codes)
    if len(found) and found.min() < 0:
        for code in set(codes[found < 0].tolist()):  # not `np.unique`: it imports numpy.ma (20 ms)
            _TOKEN_CHAR[code] = code == 1 or _WORD_CHAR.match(chr(code)) is not None
        found = np.take(_TOKEN_CHAR, codes)
    return found


def _powers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """P^i and P^-i modulo 2**64 for i < size (at least)."""
    if len(_tables[0]) < size:
        count = max(size, 2 * len(_tables[0]))
        for k, factor in enumerate((_P, pow(_P, -1, 2**64))):
            found = np.full(count, factor, dtype=np.uint64)
            found[0] = 1
            _tables[k] = np.cumprod(found, dtype=np.uint64)
    return _tables[0], _tables[1]


def _hashes(text: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hash (`WORD_HASHES`) of each token text[starts[i]:ends[i]], found by its polynomial hash; with the
    distinct hashes (sorted) and the position of each token's among them."""
    powers, inverses = _powers(len(codes) + 1)
    prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
    np.cumsum(codes * powers[:len(codes)], out=prefix[1:])  # modulo 2**64, as every operation on uint64 arrays
    poly = (prefix[ends] - prefix[starts]) * inverses[starts] ^ (ends - starts).astype(np.uint64) * _LENGTH_MIX
    distinct_poly, inverse = np.unique(poly, return_inverse=True)
    inverse = inverse.reshape(-1)
    keys = distinct_poly.tolist()
    found = list(map(_BLAKE_OF.get, keys))
    if None in found:
        if len(_BLAKE_OF) > MEMO_SIZE:
            _BLAKE_OF.clear()
        first = np.empty(len(keys), dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse) - 1, -1, -1)  # each one's first token
        at, until = starts[first].tolist(), ends[first].tolist()
        for i, value in enumerate(found):
            if value is None:
                found[i] = _BLAKE_OF[keys[i]] = WORD_HASHES[text[at[i]:until[i]]]
    distinct = np.array(found, dtype=np.uint64)
    return distinct, inverse, distinct[inverse]


def _named(entries: list[Entry], distinct: np.ndarray, inverse: np.ndarray, ids: np.ndarray, bounds: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each occurrence of an entry's name in its words (`bounds`: each entry's first) starts and ends, as
    `validate._flat_phrase_words` replaces them: from the first word on, where one of its names starts, the longest
    (of equal ones the first) that is there, and on after it. None if there is none."""
    found = [(i, rank, words) for i, entry in enumerate(entries) for rank, words in enumerate(names(entry)) if words]
    if not found:
        return None
    width = max(len(words) for _, _, words in found)
    named = np.zeros((len(found), width), dtype=np.uint64)
    for n, (_, _, words) in enumerate(found):
        named[n, :len(words)] = [WORD_HASHES[word] for word in words]
    candidates = np.flatnonzero(np.isin(distinct, named[:, 0])[inverse])  # tokens that start some entry's name
    if not len(candidates):
        return None
    owner = np.array([i for i, _, _ in found], dtype=np.int64)
    ranks = np.array([rank for _, rank, _ in found], dtype=np.int64)
    lengths = np.array([len(words) for _, _, words in found], dtype=np.int64)
    # The pairs (candidate, name of its entry with that first word) to compare, by a key of entry and word.
    name_keys = named[:, 0] ^ owner.astype(np.uint64) * _ENTRY_MIX
    order = np.argsort(name_keys, kind="stable")
    sorted_keys = name_keys[order]
    owners = np.searchsorted(bounds, candidates, side="right") - 1
    keys = ids[candidates] ^ owners.astype(np.uint64) * _ENTRY_MIX
    low, high = np.searchsorted(sorted_keys, keys), np.searchsorted(sorted_keys, keys, side="right")
    counts = high - low
    at = np.repeat(candidates, counts)
    pairs = order[np.repeat(low - np.cumsum(counts) + counts, counts) + np.arange(len(at))]
    padded = np.concatenate([ids, np.zeros(width, dtype=np.uint64)])
    same = owner[pairs] == np.repeat(owners, counts)
    for k in range(1, width):
        same &= (lengths[pairs] <= k) | (padded[at + k] == named[pairs, k])
    at, pairs = at[same], pairs[same]
    if not len(at):
        return None
    best = np.lexsort((ranks[pairs], at))  # by position, then the name's rank: the first of each position wins
    at, pairs = at[best], pairs[best]
    first = np.ones(len(at), dtype=bool)
    first[1:] = at[1:] != at[:-1]
    at, ends = at[first], at[first] + lengths[pairs[first]]
    if np.any(at[1:] < ends[:-1]):  # one name's words overlap the next: they are taken from the first on
        chosen, until = [], 0
        for start, end in zip(at.tolist(), ends.tolist()):
            if start >= until:
                chosen.append((start, end))
                until = end
        at, ends = np.array([s for s, _ in chosen], dtype=np.int64), np.array([e for _, e in chosen], dtype=np.int64)
    return at, ends
