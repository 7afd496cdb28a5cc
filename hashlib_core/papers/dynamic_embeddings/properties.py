"""The blog's three properties of a dynamic embedding, measured (not asserted): determinism, any string to a bounded
d-vector, and similar strings closer than dissimilar ones.

"Similar" is read three ways, each against random pairs drawn from the same words (so word length and alphabet are
alike on both sides), with Cohen's d and the AUC (the probability that a pair of the group is closer than a random
pair) as effect sizes:

* **spelling variants** of Card-660 (Pilehvar et al., 2018): pairs rated similar (gold score >= 3 of 4) where one
  word's letters are a subsequence of the other's, case folded ("sorry"/"srry", "Brooklyn"/"Brklyn",
  "leggin"/"legging") -- a rule, not a hand-picked list;
* **word families** of the corpus: distinct words sharing their first ``prefix_length`` letters (at least two more
  letters each), one pair per prefix;
* **meaning without spelling**: the other Card-660 pairs rated similar (abbreviations such as "PiO" /
  "President-in-Office", synonyms such as "census"/"nosecount"), where a character hash has nothing to go on.

Over all 660 pairs, the Spearman correlation of the cosine with the gold score is reported too.
"""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu, spearmanr

from hashlib_core.embeddings.dynamic import DynamicHashEmbedding, dynamic_vectors
from hashlib_core.papers.dynamic_embeddings.profiles import MODELS, DynamicEmbeddingsProfile

__all__ = ["ODD_STRINGS", "embedder", "property_checks", "is_subsequence", "similarity_groups", "effect_sizes"]

#: Strings at the edges of "any string": one character, 10,000 characters, emoji (with a zero-width joiner), CJK,
#: right-to-left text, combining marks, NUL, a lone surrogate.
ODD_STRINGS: dict[str, str] = {
    "one character": "a",
    "10,000 characters": "abcdefghij" * 1000,
    "emoji with ZWJ": "\U0001F469\u200D\U0001F4BB",
    "CJK": "\u6F22\u5B57",
    "right-to-left": "\u05E9\u05DC\u05D5\u05DD",
    "combining marks": "e\u0301e\u0300",
    "NUL": "a\x00b",
    "lone surrogate": "x\ud800y",
}


def embedder(profile: DynamicEmbeddingsProfile, dim: int | None = None):
    """``strings -> (n, d)`` vectors with the profile's embedding settings at the models' width."""
    seeds = DynamicHashEmbedding.make_seeds(dim or MODELS[0].hidden, profile.hash_seed)
    return lambda strings: dynamic_vectors(list(strings), seeds, profile.max_n, profile.hash_buckets)


_CHILD = ("import sys, json; from hashlib_core.embeddings.dynamic import dynamic_vectors, DynamicHashEmbedding;"
          "words = json.loads(sys.stdin.read()); s = DynamicHashEmbedding.make_seeds({dim}, {seed});"
          "sys.stdout.buffer.write(dynamic_vectors(words, s, {n}, {b}).tobytes())")


def property_checks(profile: DynamicEmbeddingsProfile, words: Sequence[str] = ("hash", "embedding", "Brooklyn",
                                                                              "x\ud800y", "\u6F22\u5B57")
                    ) -> pd.DataFrame:
    """One row per check: the property, what was done, the measured value, and whether the property holds."""
    dim = MODELS[0].hidden
    embed = embedder(profile, dim)
    rows = []
    here = embed(words)
    code = _CHILD.format(dim=dim, seed=profile.hash_seed, n=profile.max_n, b=profile.hash_buckets)
    child = subprocess.run([sys.executable, "-c", code], input=json.dumps(list(words)).encode("ascii"),
                           capture_output=True, check=True)
    there = np.frombuffer(child.stdout, dtype=np.float32).reshape(here.shape)
    diff = float(np.abs(here - there).max())
    rows.append({"property": "deterministic", "check": f"{len(words)} strings embedded here and in a fresh Python "
                 f"process: largest difference", "value": diff, "holds": diff == 0.0})
    for name, text in ODD_STRINGS.items():
        v = embed([text])[0]
        ok = bool(np.isfinite(v).all() and v.min() >= -1.0 and v.max() <= 1.0 and v.shape == (dim,))
        rows.append({"property": "bounded d-vector",
                     "check": f"{name} ({len(text):,} character{'s' if len(text) > 1 else ''}): largest |value|", "value": float(np.abs(v).max()),
                     "holds": ok})
    try:
        embed([""])
        empty_ok = False
    except ValueError:
        empty_ok = True
    rows.append({"property": "bounded d-vector",
                 "check": "the empty string has no n-gram: a ValueError naming the fix", "value": float("nan"),
                 "holds": empty_ok})
    return pd.DataFrame(rows)


def is_subsequence(short: str, long: str) -> bool:
    """Whether the letters of ``short`` appear in ``long`` in order (case folded)."""
    it = iter(long.casefold())
    return all(c in it for c in short.casefold())


def _cosines(embed, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    if not pairs:
        return np.zeros(0)
    a, b = embed([p[0] for p in pairs]), embed([p[1] for p in pairs])
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.maximum(na * nb, 1e-12)


def effect_sizes(group: np.ndarray, random: np.ndarray) -> dict[str, float]:
    """Cohen's d (pooled standard deviation) and the AUC P(group > random) (Mann-Whitney U / n1 n2)."""
    if len(group) < 2 or len(random) < 2:
        raise ValueError(f"effect sizes need at least two pairs on each side, got {len(group)} and {len(random)}")
    pooled = np.sqrt(((len(group) - 1) * group.var(ddof=1) + (len(random) - 1) * random.var(ddof=1))
                     / (len(group) + len(random) - 2))
    u = mannwhitneyu(group, random, alternative="two-sided").statistic
    return {"cohens_d": float((group.mean() - random.mean()) / pooled), "auc": float(u / (len(group) * len(random)))}


def _random_pairs(words: Sequence[str], count: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    words = list(words)
    i, j = rng.integers(0, len(words), size=(2, count))
    return [(words[a], words[b]) for a, b in zip(i, j) if words[a] != words[b]]


def word_families(corpus: Sequence[str], prefix_length: int) -> list[tuple[str, str]]:
    """One pair per ``prefix_length``-letter prefix shared by two distinct alphabetic corpus words (each at least two
    letters longer than the prefix): the two most frequent such words."""
    counts: dict[str, int] = {}
    for line in corpus:
        for w in line.split():
            if w.isalpha() and w.islower() and len(w) >= prefix_length + 2:
                counts[w] = counts.get(w, 0) + 1
    by_prefix: dict[str, list[str]] = {}
    for w in sorted(counts, key=lambda w: (-counts[w], w)):
        by_prefix.setdefault(w[:prefix_length], []).append(w)
    return [(ws[0], ws[1]) for _, ws in sorted(by_prefix.items()) if len(ws) >= 2]


def similarity_groups(profile: DynamicEmbeddingsProfile, corpus: Sequence[str]) -> pd.DataFrame:
    """One row per group: pairs, mean cosine of the group and of random pairs of the same words, Cohen's d, AUC;
    and a row with the Spearman correlation of cosine and gold score over all Card-660 pairs."""
    from hashlib_core.data import load_card660

    embed = embedder(profile)
    rng = np.random.default_rng(profile.seed)
    card = load_card660().to_pandas()
    similar = card[card["score"] >= 3.0]
    spelled = [(a, b) for a, b in zip(similar["word1"], similar["word2"])
               if is_subsequence(*sorted((a, b), key=len))]
    meaning = [(a, b) for a, b in zip(similar["word1"], similar["word2"]) if (a, b) not in set(spelled)]
    groups = {"Card-660 spelling variants": spelled,
              f"corpus word families ({profile.prefix_length}-letter prefix)":
                  word_families(corpus, profile.prefix_length),
              "Card-660 similar in meaning only": meaning}
    rows = []
    for name, pairs in groups.items():
        words = [w for p in pairs for w in p]
        group, random = _cosines(embed, pairs), _cosines(embed, _random_pairs(words, profile.random_pairs, rng))
        rows.append({"group": name, "pairs": len(pairs), "example": " / ".join(pairs[0]) if pairs else "",
                     "mean_cosine": float(group.mean()), "random_mean_cosine": float(random.mean()),
                     "random_pairs": len(random), **effect_sizes(group, random), "spearman_with_gold": np.nan})
    cos_all = _cosines(embed, list(zip(card["word1"], card["word2"])))
    rows.append({"group": "Card-660, all pairs", "pairs": len(card), "example": "",
                 "mean_cosine": float(cos_all.mean()), "random_mean_cosine": np.nan, "random_pairs": 0,
                 "cohens_d": np.nan, "auc": np.nan,
                 "spearman_with_gold": float(spearmanr(cos_all, card["score"]).statistic)})
    return pd.DataFrame(rows)


def community_comparison(ngrams: Sequence[str] = ("the", "ing", "Brk", "d\u00e9j"), seed_value: int = 3_000_000_019,
                         modulus: int = 1_000_000_007) -> pd.DataFrame:
    """For each n-gram: our hash (int64) and the big-integer definition; the community JAX recurrence; and the
    product ``hash x h`` reduced mod b exactly and after int32 wrapping (``seed_value`` is a PRNG key word as the
    blog's ``h``, any value above 2^31 / hash shows the overflow)."""
    from hashlib_core.hashing.rolling import community_rolling_hash, ngram_hashes, reference_hash, wrap_int32

    rows = []
    for g in ngrams:
        ours = int(ngram_hashes(g, len(g))[0])
        blog = community_rolling_hash([ord(c) for c in g])
        standard_blog_base = sum(ord(c) * 31 ** (len(g) - 1 - i) for i, c in enumerate(g)) % modulus
        exact = (blog * seed_value) % modulus
        wrapped = int(wrap_int32(blog * seed_value)) % modulus
        rows.append({"n-gram": g, "ours (int64)": ours, "big-integer definition": reference_hash(g),
                     "standard, blog's p=31": standard_blog_base, "community recurrence": blog,
                     "hash x h mod b, exact": exact, "hash x h mod b, int32": wrapped})
    return pd.DataFrame(rows)
