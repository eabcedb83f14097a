/* Search in the page, without the runtime: reads the build's static index (/search/index.json, the
   shards of the query's words and the document files of the hits it shows, written by
   petgen/emit/searchindex.py) and ranks as petgen/search/query.py does (its
   constants come with the index: `scoring`), with the
   same normalisation (case, umlauts and ae/oe/ue folded to base letters, accents, stopwords), whole
   words, prefixes, compound parts and typos (1 edit from 4 letters, 2 from 8, same first letter). What
   it leaves out is stemming, which needs the Snowball stemmers: a query word only matches a stem that
   equals it.
   No dependencies. /api/search (the runtime's engine) is asked only when the static index finds
   nothing for a submitted search. */
(() => {
  "use strict";
  const STOPWORDS = new Set(("der die das des dem den ein eine einer einen einem eines und oder mit fur von zu zum zur " +
    "im in am an auf ist sind es er sie ihr wir ich du mich dich sich als auch so wie the a an and or of to for with " +
    "is are my me you your it its on in at be").split(" "));
  const UMLAUTS = { "ä": "a", "ö": "o", "ü": "u", "ß": "ss" };
  const UNDECOMPOSED = { "ı": "i", "ł": "l", "đ": "d", "ø": "o", "æ": "ae", "œ": "oe", "þ": "th", "ð": "d", "ħ": "h" };

  /* Normalisation: petgen/search/index.py `fold_word` and `words`. */
  function fold(word) {
    word = word.replace(/[äöüß]/g, (c) => UMLAUTS[c]).normalize("NFKD").replace(/\p{M}/gu, "")
      .replace(/[ıłđøæœþðħ]/g, (c) => UNDECOMPOSED[c]);
    return word.replace(/ae/g, "a").replace(/oe/g, "o").replace(/ue/g, "u");
  }
  function analyze(text) {
    const found = (text.normalize("NFC").toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).map(fold);
    const kept = found.filter((w) => !STOPWORDS.has(w));
    return [...new Set(kept.length ? kept : found)];
  }
  /* Optimal string alignment distance (transpositions count 1), as rapidfuzz's OSA. */
  function osa(a, b) {
    const rows = [];
    for (let i = 0; i <= a.length; i++) {
      rows.push([i]);
      for (let j = 1; j <= b.length; j++) {
        if (i === 0) { rows[0].push(j); continue; }
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
        rows[i].push(d);
      }
    }
    return rows[a.length][b.length];
  }

  /* The index: the manifest once, each shard and each document file once, when first needed. */
  let manifest = null;
  const shards = new Map(), documentFiles = new Map();
  function loadManifest() {
    manifest = manifest || fetch("/search/index.json").then((r) => {
      if (!r.ok) throw new Error("search index: " + r.status);
      return r.json();
    });
    manifest.catch(() => { manifest = null; });
    return manifest;
  }
  function shardKey(term) { return term.length >= 2 ? term.slice(0, 2) : "_"; }
  async function loadShard(key) {
    const index = await loadManifest();
    if (!index.shards[key]) return null;
    if (!shards.has(key)) {
      shards.set(key, fetch(index.shards[key]).then((r) => r.json()).then((data) => {
        data.sorted = Object.keys(data.words).sort();
        return data;
      }));
    }
    return shards.get(key);
  }

  /* [slug, title, meaning, url] of some documents (numbered in title order), from their document files. */
  async function documents(numbers, index) {
    const { per_file: size, files } = index.documents;
    const load = (k) => {
      if (!documentFiles.has(k)) {
        const file = fetch(files[k]).then((r) => {
          if (!r.ok) throw new Error("search documents: " + r.status);
          return r.json();
        });
        file.catch(() => documentFiles.delete(k));
        documentFiles.set(k, file);
      }
      return documentFiles.get(k);
    };
    const loaded = new Map(await Promise.all([...new Set(numbers.map((n) => Math.floor(n / size)))]
      .map(async (k) => [k, await load(k)])));
    return numbers.map((n) => loaded.get(Math.floor(n / size))[n % size]);
  }

  /* One query word against every document: petgen/search/query.py `SearchIndex.postings` and `group_of`.
     Each document's best confidence over the word's matches: the field's confidence (from its index
     weight) times the match's quality. Of the word's completions, the first `fanout` (its share of the
     query's: `prefixShare`). */
  async function matchWord(word, index, fanout) {
    const { quality, scoring } = index;
    const best = new Map();
    const take = (postings, q) => {
      if (!postings) return;
      const [docs, weights] = postings;
      for (let i = 0; i < docs.length; i++) {
        const score = confidence(weights[i], scoring.field_confidence) * q;
        if (score > (best.get(docs[i]) || 0)) best.set(docs[i], score);
      }
    };
    const shard = await loadShard(shardKey(word));
    const indexed = Boolean(shard && shard.words[word]);
    if (shard) {
      take(shard.stems[word], quality.stem);
      take(shard.words[word], quality.exact);
      take(shard.parts[word], quality.compound);
      if (word.length >= 2 && fanout > 0) {  // completions: at most `fanout`, shortest first (SearchIndex.completions)
        const short = word.length <= scoring.short_prefix, found = [];
        for (let i = lowerBound(shard.sorted, word); i < shard.sorted.length && (short || found.length < scoring.prefix_scan); i++) {
          if (!shard.sorted[i].startsWith(word)) break;
          found.push(shard.sorted[i]);
        }
        found.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
        const [base, coverage] = scoring.prefix;
        const kept = found.slice(0, scoring.prefix_fanout + (short ? 0 : 1)).filter((w) => w !== word);
        for (const completion of kept.slice(0, Math.min(scoring.prefix_fanout, fanout))) {
          take(shard.words[completion], base + coverage * word.length / completion.length);
        }
      }
    }
    if (word.length >= 4 && !indexed) {  // typos: only for a word not itself indexed, the nearest first
      const limit = word.length >= 8 ? 2 : 1;
      const keys = Object.keys(index.shards).filter((k) => k[0] === word[0]);  // the shards of its first letter
      const near = [];
      for (const candidate of await Promise.all(keys.map(loadShard))) {
        if (!candidate) continue;
        for (const w of candidate.sorted) {
          const delta = w.length - word.length;
          if (Math.abs(delta) > limit) continue;
          const distance = osa(word, w);
          if (distance > 0 && distance <= limit) near.push([distance, Math.abs(delta) * 2 - (delta < 0 ? 1 : 0), w, candidate]);
        }
      }
      near.sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
      for (const [distance, , w, candidate] of near.slice(0, scoring.typo_matches)) {
        take(candidate.words[w], distance === 1 ? quality.typo1 : quality.typo2);
      }
    }
    return best;
  }
  /* The field confidence of an index weight: linear between the points given, flat beyond them (numpy.interp). */
  function confidence(weight, points) {
    if (weight <= points[0][0]) return points[0][1];
    for (let i = 1; i < points.length; i++) {
      const [x0, y0] = points[i - 1], [x1, y1] = points[i];
      if (weight <= x1) return y0 + (y1 - y0) * (weight - x0) / (x1 - x0);
    }
    return points[points.length - 1][1];
  }
  /* How many completions each word keeps when `words` of a query's words are expanded as prefixes: the
     query's query_completions shared out, prefix_fanout at most (petgen/search/query.py `prefix_share`). */
  function prefixShare(words, scoring) {
    return Math.min(scoring.prefix_fanout, Math.floor(scoring.query_completions / Math.max(1, words)));
  }
  function lowerBound(sorted, word) {
    let lo = 0, hi = sorted.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < word) lo = mid + 1; else hi = mid; }
    return lo;
  }

  /* A query: the best `limit` hits and the number of all. A document's score is the mean, over the query
     words that match anything, of its best confidence for each word (0 for a word it does not match);
     ties go to the title first in title order, which is the document's number in the static index:
     petgen/search/query.py `combine`, `ranked`. Only the document files of the hits shown are fetched. */
  async function search(query, { limit = 8 } = {}) {
    const index = await loadManifest();
    const words = analyze(query);
    const fanout = prefixShare(words.filter((w) => w.length >= 2).length, index.scoring);
    const matches = (await Promise.all(words.map((w) => matchWord(w, index, fanout)))).filter((m) => m.size);
    const sums = new Map();
    for (const best of matches) best.forEach((score, doc) => sums.set(doc, (sums.get(doc) || 0) + score));
    const precision = 10 ** index.scoring.score_digits;
    const ranked = [...sums].map(([doc, sum]) => [doc, sum / matches.length, Math.round(sum / matches.length * precision)]);
    ranked.sort((a, b) => b[2] - a[2] || a[0] - b[0]);
    const best = ranked.slice(0, limit);
    const found = await documents(best.map(([doc]) => doc), index);
    const items = best.map(([, score], i) => {
      const [slug, title, meaning, url] = found[i];
      return { slug, title, meaning, url: localUrl(url), score: Math.round(Math.min(1, score) * 1000) / 1000 };
    });
    return { query, total: ranked.length, items };
  }
  /* Links stay on the host that served the page (a deploy preview, a local server). */
  function localUrl(url) {
    try { return new URL(url).pathname; } catch (e) { return url; }
  }

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    node.append(...children);
    return node;
  }
  function cards(items) {
    return element("ul", { class: "cards" }, ...items.map((hit) => element("li", { class: "card" },
      element("h3", {}, element("a", { href: hit.url }, hit.title)), element("p", {}, hit.meaning))));
  }

  /* A search box: a combobox whose listbox shows the best matches as you type (ARIA 1.2 pattern). */
  function combobox(input) {
    const form = input.form;
    const list = element("ul", { id: input.id + "-list", class: "suggest", role: "listbox", "aria-label": "Vorschläge" });
    const status = element("p", { class: "sr-only", role: "status" });
    list.hidden = true;
    form.append(list, status);
    Object.entries({ role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": list.id })
      .forEach(([name, value]) => input.setAttribute(name, value));
    let hits = [], active = -1, sequence = 0, timer = 0;

    const close = () => {
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
      active = -1;
    };
    const select = (n) => {
      active = n;
      [...list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === n)));
      if (n >= 0) input.setAttribute("aria-activedescendant", list.children[n].id);
      else input.removeAttribute("aria-activedescendant");
    };
    const open = (found) => {
      hits = found.items;
      list.replaceChildren(...hits.map((hit, i) => {
        const li = element("li", { id: `${list.id}-${i}`, role: "option", "aria-selected": "false" },
          element("strong", {}, hit.title), element("small", {}, hit.meaning));
        li.addEventListener("mousedown", (event) => { event.preventDefault(); window.location.href = hit.url; });
        return li;
      }));
      list.dataset.query = found.query;
      status.textContent = found.total ? `${found.total} Treffer` : "Keine Treffer";
      if (!hits.length) { close(); return; }
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
      select(-1);
    };
    const update = async () => {
      const query = input.value.trim(), mine = ++sequence;
      if (query.length < 2) { close(); status.textContent = ""; return; }
      let found;
      try { found = await search(query); } catch (e) { return; }
      if (mine === sequence && document.activeElement === input) open(found);
    };
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(update, 60); });
    input.addEventListener("focus", () => { loadManifest().catch(() => {}); if (input.value.trim().length >= 2) update(); });
    input.addEventListener("blur", () => setTimeout(close, 100));
    input.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (list.hidden) { update(); return; }
        event.preventDefault();
        let next = active + (event.key === "ArrowDown" ? 1 : -1);  // -1: back in the input
        if (next >= hits.length) next = -1;
        if (next < -1) next = hits.length - 1;
        select(next);
      } else if (event.key === "Enter" && active >= 0 && !list.hidden) {
        event.preventDefault();
        window.location.href = hits[active].url;
      } else if (event.key === "Escape" && !list.hidden) {
        event.preventDefault();  // the first Escape closes the list; the next one clears the box
        close();
      }
    });
  }

  /* The search page (/search/?q=…): every match as a card. */
  async function searchPage(results) {
    const query = (new URLSearchParams(window.location.search).get("q") || "").trim();
    const input = document.getElementById("q-page");
    if (input) input.value = query;
    if (query.length < 2) return;
    let found = await search(query, { limit: 50 }).catch(() => ({ total: 0, items: [] }));
    if (!found.total) found = await runtimeSearch(query) || found;
    const heading = element("h2", {}, found.total ? `${found.total} Treffer für „${query}“` : `Keine Treffer für „${query}“`);
    results.replaceChildren(heading, ...(found.items.length ? [cards(found.items)] : [
      element("p", {}, "Versuch es mit einem anderen Wort, oder stöbere unten nach Buchstaben und Themen.")]));
  }
  /* The runtime's engine (stems, synonyms) where one answers; a CDN without it answers 404: no matter. */
  async function runtimeSearch(query) {
    try {
      const response = await fetch("/api/search?" + new URLSearchParams({ q: query, limit: "50" }));
      if (!response.ok) return null;
      const body = await response.json();
      return { total: body.total, items: body.items.map((hit) => ({ ...hit, url: localUrl(hit.url) })) };
    } catch (e) {
      return null;
    }
  }

  /* The 404 page: names near the last segment of the path (`/names/baerchn/` → Bärchen). */
  async function notFound(box) {
    const segments = window.location.pathname.split("/").filter(Boolean);
    let guess = segments.length ? segments[segments.length - 1] : "";
    try { guess = decodeURIComponent(guess); } catch (e) { /* keep it as it is */ }
    guess = guess.replace(/\.(html?|json)$/, "").replace(/[-_+.]+/g, " ").trim();
    const input = document.getElementById("q-404");
    if (input && guess) input.value = guess;
    if (guess.length < 2) return;
    const found = await search(guess, { limit: 5 }).catch(() => ({ items: [] }));
    if (found.items.length) box.replaceChildren(element("h2", {}, "Meintest du …"), cards(found.items));
  }

  function start() {
    document.querySelectorAll("input[data-search]").forEach(combobox);
    const page = document.body.dataset.page;
    if (page === "search") searchPage(document.getElementById("results"));
    if (page === "404") notFound(document.getElementById("suggestions"));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
