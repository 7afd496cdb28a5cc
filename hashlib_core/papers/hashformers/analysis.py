"""What the hashes do to words, without training (§3.2, §3.3, §3.5): the MD5 example, bucket sharing over a corpus
vocabulary, and how close morphological variants land."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher
from hashlib_core.hashing.md5 import KeyedMD5Hasher, md5_hex

__all__ = ["PAPER_MD5_EXAMPLE", "WORD_FAMILIES", "md5_example", "expected_sharing_uniform", "bucket_sharing",
           "morphology"]

#: The digests §3.2 prints ("MD5('play') = d077f2..."). Words -> printed hex digest. Quoted from the paper's text;
#: the test of :func:`md5_example` checks that neither plain MD5 nor the released HMAC-MD5 gives them.
PAPER_MD5_EXAMPLE = {
    "play": "d077f244def8a70e5ea758bd8352fcd8",
    "plays": "4a258d930b7d3409982d727ddbb4ba88",
}

#: The morphological families shown in the chapter (§3.3's 'play', 'plays', 'played' and a few more).
WORD_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("play", "plays", "played", "playing", "player"),
    ("work", "works", "worked", "working", "worker"),
    ("nation", "nations", "national", "nationally", "nationality"),
    ("run", "runs", "running", "runner", "rerun"),
)


def md5_example() -> pd.DataFrame:
    """§3.2's printed MD5 digests beside plain MD5 and the released HMAC-MD5 with key ``b"en"``."""
    rows = []
    for word, printed in PAPER_MD5_EXAMPLE.items():
        plain, keyed = md5_hex(word, key=None), md5_hex(word)
        rows.append({"word": word, "paper": printed, "plain_md5": plain, "hmac_md5_key_en": keyed,
                     "plain_matches": plain == printed, "hmac_matches": keyed == printed})
    return pd.DataFrame(rows)


def expected_sharing_uniform(num_words: int, num_buckets: int) -> float:
    """Expected number of words that share their bucket with another word when ``num_words`` distinct words are
    hashed uniformly at random into ``num_buckets`` buckets: ``V (1 - (1 - 1/N)^(V-1))``."""
    if num_words < 0 or num_buckets < 1:
        raise ValueError("num_words must be >= 0 and num_buckets >= 1")
    return num_words * (1.0 - (1.0 - 1.0 / num_buckets) ** max(num_words - 1, 0))


def bucket_sharing(words: Sequence[str], feature_bpe: Any, bucket_counts: Sequence[int]) -> pd.DataFrame:
    """For each N: how many of ``words`` share an Emb bucket with another word under MD5 and under LSH."""
    rows = []
    for n in bucket_counts:
        for name, hasher in (("MD5", KeyedMD5Hasher(num_buckets=n)),
                             ("LSH", LSHBucketHasher(feature_bpe, num_buckets=n,
                                                     feature_dim=feature_bpe.get_vocab_size()))):
            ids = hasher.batch_index(words).numpy()
            _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
            rows.append({"hash": name, "num_buckets": n, "words": len(words), "buckets_used": len(counts),
                         "words_sharing": int((counts[inverse] > 1).sum()), "largest_bucket": int(counts.max()),
                         "expected_sharing_uniform": expected_sharing_uniform(len(words), n)})
    return pd.DataFrame(rows)


def morphology(feature_bpe: Any, num_buckets: int, families: Sequence[Sequence[str]] = WORD_FAMILIES
               ) -> pd.DataFrame:
    """Each word of a family beside its first word: same Emb bucket? Hamming distance of the 128-bit codes?"""
    md5_index, md5_bits = KeyedMD5Hasher(num_buckets=num_buckets), KeyedMD5Hasher()
    lsh_index = LSHBucketHasher(feature_bpe, num_buckets=num_buckets, feature_dim=feature_bpe.get_vocab_size())
    lsh_bits = LSHBitHasher(feature_bpe)
    rows = []
    for family in families:
        base = family[0]
        for word in family[1:]:
            rows.append({
                "base": base, "word": word, "num_buckets": num_buckets,
                "md5_same_bucket": md5_index.index(base) == md5_index.index(word),
                "lsh_same_bucket": lsh_index.index(base) == lsh_index.index(word),
                "lsh_bucket_distance": abs(lsh_index.index(base) - lsh_index.index(word)),
                "md5_hamming": int((md5_bits.bits(base) != md5_bits.bits(word)).sum()),
                "lsh_hamming": int((lsh_bits.bits(base) != lsh_bits.bits(word)).sum()),
            })
    return pd.DataFrame(rows)
