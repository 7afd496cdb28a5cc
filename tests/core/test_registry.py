"""Tests for SignatureRegistry (MultiHashFormer §3.1 rehashing, §5 vocabulary expansion): global uniqueness,
equality with an independent naive reference, expansion, the training-time table, files, and bad input."""
from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from pathlib import Path

import mmh3
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hashlib_core.benchmarks.hashing import build_word_list
from hashlib_core.hashing import MMH3MultiHasher, RegistryFileError, SignatureRegistry
from hashlib_core.hashing import registry as registry_module
from hashlib_core.hashing.multihash import pack_rows as _pack_rows
from hashlib_core.hashing.registry_file import _decode_file, _encode_file

#: Non-empty tokens from every script, emoji, whitespace, NUL (no lone surrogates).
token_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


def coordinate(token: str, seed: int, buckets: int) -> int:
    """One coordinate computed the way the official MHF code calls mmh3 (keyword seed, unsigned x64)."""
    return mmh3.hash128(token, seed=seed) % (buckets - 1) + 1


def reference_register(batches: list[list[str]], num_hashes: int, num_buckets: int):
    """Naive, independent reference: tuples in a set, one token at a time, all-or-nothing per batch.

    Returns (tokens, signatures, rehash counts, per-batch outcome "ok"/"refused").
    """
    tokens: list[str] = []
    signatures: list[tuple[int, ...]] = []
    rehash: list[int] = []
    outcomes = []
    for batch in batches:
        new = [t for t in dict.fromkeys(batch) if t not in tokens]
        prefixes = Counter(tuple(coordinate(t, i, num_buckets) for i in range(num_hashes - 1)) for t in tokens + new)
        if len(tokens) + len(new) > (num_buckets - 1) ** num_hashes or (
            prefixes and max(prefixes.values()) > num_buckets - 1
        ):
            outcomes.append("refused")
            continue
        taken = set(signatures)
        for t in new:
            prefix = tuple(coordinate(t, i, num_buckets) for i in range(num_hashes - 1))
            r = 0
            sig = prefix + (coordinate(t, num_hashes - 1, num_buckets),)
            while sig in taken:
                r += 1
                sig = prefix + (coordinate(t, num_hashes - 1 + r, num_buckets),)
            taken.add(sig)
            tokens.append(t)
            signatures.append(sig)
            rehash.append(r)
        outcomes.append("ok")
    return tokens, signatures, rehash, outcomes


def official_mhf_assign(tokens: list[str], num_hashes: int, num_buckets: int) -> list[tuple[int, ...]]:
    """The released MHF rule (Qwen3Model.initialize_hash_map, notes A3), restated: per prefix it remembers only the
    LAST token seen with that prefix, and a new token is compared (and rehashed) against that one alone."""
    last_seen: dict[tuple[int, ...], int] = {}
    out = []
    for t in tokens:
        prefix = tuple(coordinate(t, i, num_buckets) for i in range(num_hashes - 1))
        value = coordinate(t, num_hashes - 1, num_buckets)
        r = 0
        while prefix in last_seen and value == last_seen[prefix]:
            r += 1
            value = coordinate(t, num_hashes - 1 + r, num_buckets)
        last_seen[prefix] = value
        out.append(prefix + (value,))
    return out


def assert_consistent(reg: SignatureRegistry) -> None:
    """Invariants every registry must satisfy, checked from scratch."""
    table = reg.table().numpy()
    n, h, b = len(reg), reg.num_hashes, reg.num_buckets
    assert table.shape == (n, h)
    assert len({tuple(row) for row in table.tolist()}) == n  # globally unique
    if n:
        assert table.min() >= 1 and table.max() <= b - 1
    seeds = reg.last_seeds()
    for i, token in enumerate(reg.tokens):
        assert reg.id(token) == i
        assert tuple(table[i, :-1]) == tuple(coordinate(token, s, b) for s in range(h - 1))
        assert table[i, -1] == coordinate(token, int(seeds[i]), b)


# ----------------------------------------------------------------------------------------------------------------
# Basic behaviour
# ----------------------------------------------------------------------------------------------------------------
def test_ids_follow_registration_order_and_duplicates_share_an_id():
    reg = SignatureRegistry(num_hashes=4, num_buckets=16384)
    assert reg.register(["the", "cat", "the", "sat"]).tolist() == [0, 1, 0, 2]
    assert reg.register(["sat", "on", "the", "mat", "on"]).tolist() == [2, 3, 0, 4, 3]
    assert reg.register([]).tolist() == []
    assert len(reg) == 5 and reg.tokens == ["the", "cat", "sat", "on", "mat"]
    assert "cat" in reg and "dog" not in reg and 5 not in reg and None not in reg
    assert reg.id("mat") == 4
    assert reg.ids(["mat", "the"]).tolist() == [4, 0]
    assert reg.signature("the") == MMH3MultiHasher(4, 16384).signature("the")  # no collision at this size
    assert reg.capacity == 16383**4
    assert repr(reg) == "SignatureRegistry(num_hashes=4, num_buckets=16384, tokens=5)"


def test_table_is_long_tensor_and_training_is_a_gather():
    reg = SignatureRegistry(3, 64)
    ids = reg.register([f"w{i}" for i in range(500)])
    table = reg.table()
    assert table.dtype == torch.long and table.shape == (500, 3)
    batch = torch.from_numpy(ids[[5, 7, 5, 499]])
    gathered = table[batch]
    assert gathered.tolist() == [list(reg.signature(f"w{i}")) for i in (5, 7, 5, 499)]
    table[0, 0] = 0  # the export is a copy: training code cannot corrupt the registry
    assert reg.table()[0, 0] != 0


def test_lookup_errors_name_the_fix():
    reg = SignatureRegistry(2, 64)
    reg.register(["a"])
    with pytest.raises(KeyError, match=r"register\(\[token\]\)"):
        reg.id("b")
    with pytest.raises(KeyError, match="position 1"):
        reg.ids(["a", "b"])
    with pytest.raises(KeyError):
        reg.signature("b")


def test_pack_rows_fast_path_equals_python_reference():
    rng = np.random.default_rng(0)
    for bits, width in [(14, 4), (14, 5), (40, 3), (1, 70), (62, 2), (7, 0)]:
        rows = rng.integers(0, 2**bits, size=(300, width), dtype=np.int64)
        expected = [sum(int(c) << (i * bits) for i, c in enumerate(row)) for row in rows]
        assert _pack_rows(rows, bits) == expected


# ----------------------------------------------------------------------------------------------------------------
# Uniqueness, rehashing, expansion: equal to the naive reference
# ----------------------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    batches=st.lists(st.lists(token_text, max_size=80), min_size=1, max_size=4),
    num_hashes=st.sampled_from([1, 2, 3]),
    num_buckets=st.sampled_from([3, 8, 64]),
)
def test_registry_equals_naive_reference_in_collision_heavy_settings(batches, num_hashes, num_buckets):
    reg = SignatureRegistry(num_hashes, num_buckets)
    tokens, signatures, rehash, outcomes = reference_register(batches, num_hashes, num_buckets)
    for batch, outcome in zip(batches, outcomes):
        before = (reg.tokens, reg.table(), reg.rehash_counts())
        if outcome == "refused":
            with pytest.raises(ValueError, match="use more buckets or more hash functions"):
                reg.register(batch)
            assert reg.tokens == before[0] and torch.equal(reg.table(), before[1])  # unchanged
        else:
            ids = reg.register(batch)
            assert [reg.tokens[i] for i in ids] == batch
            assert torch.equal(reg.table()[: len(before[0])], before[1])  # old signatures unchanged
    assert reg.tokens == tokens
    assert [tuple(row) for row in reg.table().tolist()] == signatures
    assert reg.rehash_counts().tolist() == rehash
    assert (reg.last_seeds() == np.array(rehash, dtype=np.int64) + num_hashes - 1).all()
    assert_consistent(reg)


def test_registry_equals_reference_when_half_full():
    words = build_word_list(2000, seed=11)
    batches = [words[:700], words[500:1500] + words[:10], words[1500:]]  # overlaps and re-registrations
    tokens, signatures, rehash, outcomes = reference_register(batches, 2, 64)  # 2000 of 3969 signatures
    assert outcomes == ["ok", "ok", "ok"] and sum(r > 0 for r in rehash) > 300 and max(rehash) > 5
    reg = SignatureRegistry(2, 64)
    for batch in batches:
        reg.register(batch)
    assert reg.tokens == tokens and reg.rehash_counts().tolist() == rehash
    assert [tuple(row) for row in reg.table().tolist()] == signatures


@settings(max_examples=1, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_200k_multiscript_tokens_get_unique_signatures_and_expansion_is_stable(seed):
    words = build_word_list(200_000, seed=seed)  # Latin, Greek, Cyrillic, Arabic, CJK, Hangul, emoji, ...
    h, b = 2, 1024  # 1023**2 ~ 1.05M signatures: about 19k base collisions for 200k tokens
    reg = SignatureRegistry(h, b)
    first = reg.register(words[:150_000])
    old_table = reg.table()
    second = reg.register(words[150_000:])
    assert first.tolist() == list(range(150_000)) and second.tolist() == list(range(150_000, 200_000))
    table = reg.table().numpy()
    assert len(np.unique(table, axis=0)) == 200_000
    assert torch.equal(reg.table()[:150_000], old_table)  # expansion changed no existing signature
    rehash = reg.rehash_counts()
    assert (rehash > 0).sum() > 1000
    base = MMH3MultiHasher(h, b).batch(words)
    assert (table[:, 0] == base[:, 0]).all()  # the prefix is never rehashed
    assert ((table[:, 1] == base[:, 1]) == (rehash == 0)).all()
    last_seeds = reg.last_seeds().tolist()
    for i in np.flatnonzero(rehash)[:2000].tolist():
        assert table[i, 1] == coordinate(words[i], last_seeds[i], b)
    one_shot = SignatureRegistry(h, b)
    one_shot.register(words)
    assert one_shot == reg  # registering in two calls == registering at once


def test_workers_give_bit_identical_results():
    words = build_word_list(6000, seed=1)
    serial, parallel = SignatureRegistry(2, 128), SignatureRegistry(2, 128)
    serial.register(words[:1000])
    parallel.register(words[:1000], workers=2)
    assert serial.register(words, workers=1).tolist() == parallel.register(words, workers=2).tolist()
    assert serial == parallel and torch.equal(serial.table(), parallel.table())
    assert serial.rehash_counts().max() > 0


def test_official_rule_can_collide_and_ours_cannot():
    # With H=1, B=4 (3 usable buckets), find tokens a, b, c whose base buckets are x, y, x: the official rule
    # compares c only with b (the last token with the same, empty, prefix) and gives c the same signature as a.
    words = [f"tok{i}" for i in range(200)]
    by_bucket: dict[int, list[str]] = {}
    for w in words:
        by_bucket.setdefault(coordinate(w, 0, 4), []).append(w)
    x, y = sorted(by_bucket)[:2]
    trio = [by_bucket[x][0], by_bucket[y][0], by_bucket[x][1]]
    official = official_mhf_assign(trio, 1, 4)
    assert official[0] == official[2]  # duplicate signature
    reg = SignatureRegistry(1, 4)
    reg.register(trio)
    assert len(set(map(tuple, reg.table().tolist()))) == 3
    # Without any collision both rules give the base signatures.
    plain = build_word_list(300, seed=5)
    ours = SignatureRegistry(4, 16384)
    ours.register(plain)
    assert [tuple(r) for r in ours.table().tolist()] == official_mhf_assign(plain, 4, 16384)


# ----------------------------------------------------------------------------------------------------------------
# Capacity and all-or-nothing registration
# ----------------------------------------------------------------------------------------------------------------
def test_capacity_and_prefix_limits_are_refused_up_front():
    reg = SignatureRegistry(1, 4)  # 3 signatures
    with pytest.raises(ValueError, match=r"\(B-1\)\*\*H = 3"):
        reg.register(["a", "b", "c", "d"])
    assert len(reg) == 0
    assert reg.register(["a", "b", "c"]).tolist() == [0, 1, 2]
    assert_consistent(reg)
    with pytest.raises(ValueError, match="3 are taken"):
        reg.register(["d"])

    # H=2, B=3: capacity 4, but at most 2 tokens may share a first coordinate.
    words = [f"w{i}" for i in range(20)]
    groups: dict[int, list[str]] = {}
    for w in words:
        groups.setdefault(coordinate(w, 0, 3), []).append(w)
    crowded = next(g for g in groups.values() if len(g) >= 3)[:3]
    reg2 = SignatureRegistry(2, 3)
    with pytest.raises(ValueError, match=r"3 tokens .* share the first 1 coordinates"):
        reg2.register(crowded)
    assert len(reg2) == 0


def test_a_failure_during_the_uniqueness_pass_leaves_the_registry_unchanged(monkeypatch):
    words = build_word_list(400, seed=2)
    reg = SignatureRegistry(2, 32)
    reg.register(words[:200])
    snapshot = (reg.tokens, reg.table(), reg.rehash_counts(), set(reg._keys))
    calls = {"n": 0}
    original = SignatureRegistry._find_free_last

    def failing(self, token, prefix, seen):
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("injected")
        return original(self, token, prefix, seen)

    monkeypatch.setattr(SignatureRegistry, "_find_free_last", failing)
    with pytest.raises(RuntimeError, match="injected"):
        reg.register(words[200:])
    monkeypatch.setattr(SignatureRegistry, "_find_free_last", original)
    assert reg.tokens == snapshot[0] and torch.equal(reg.table(), snapshot[1])
    assert (reg.rehash_counts() == snapshot[2]).all() and reg._keys == snapshot[3]
    reg.register(words[200:])
    fresh = SignatureRegistry(2, 32)
    fresh.register(words)
    assert reg == fresh


# ----------------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------------
def test_empty_string_is_refused_without_partial_registration():
    reg = SignatureRegistry(2, 64)
    with pytest.raises(ValueError, match="position 2 is the empty string"):
        reg.register(["a", "b", "", "c"])
    assert len(reg) == 0 and "a" not in reg


def test_unusual_but_valid_tokens_are_registered():
    family = "👩\u200d👩\u200d👧"  # emoji joined by zero-width joiners
    tokens = [" ", "  ", "\t", "a\x00b", "😀", family, "𝔘𝔫𝔦", "x" * 10_000, "Ġthe", "日本語"]
    reg = SignatureRegistry(3, 256)
    assert reg.register(tokens).tolist() == list(range(len(tokens)))
    assert_consistent(reg)


@pytest.mark.parametrize("bad, error, match", [
    ([b"a"], TypeError, "decode bytes"),
    ([1], TypeError, "must be a str"),
    ([None], TypeError, "must be a str"),
    (["ok", "\ud83d"], ValueError, "lone surrogate"),
    ("abc", TypeError, "wrap it in a list"),
    (5, TypeError, "iterable"),
])
def test_bad_tokens_raise_clear_errors(bad, error, match):
    reg = SignatureRegistry(2, 64)
    with pytest.raises(error, match=match):
        reg.register(bad)
    assert len(reg) == 0


@pytest.mark.parametrize("args, kwargs, error", [
    ((0, 16), {}, ValueError), ((2, 1), {}, ValueError), ((2, 16.0), {}, TypeError),
])
def test_bad_settings(args, kwargs, error):
    with pytest.raises(error):
        SignatureRegistry(*args, **kwargs)


def test_bad_workers():
    with pytest.raises(ValueError, match="workers"):
        SignatureRegistry(2, 16).register(["a"], workers=0)


# ----------------------------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------------------------
def _registry_with_rehashes() -> SignatureRegistry:
    reg = SignatureRegistry(2, 32)
    reg.register(build_word_list(300, seed=7) + ["a\x00b", " ", "😀", "x" * 10_000, "日本語"])
    assert reg.rehash_counts().max() > 0
    return reg


def test_save_load_round_trip_and_continued_expansion(tmp_path):
    reg = _registry_with_rehashes()
    path = reg.save(tmp_path / "sub" / "vocab.sigreg")
    assert path.exists() and not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    loaded = SignatureRegistry.load(path)
    assert loaded == reg and loaded.tokens == reg.tokens
    assert torch.equal(loaded.table(), reg.table()) and (loaded.last_seeds() == reg.last_seeds()).all()
    assert SignatureRegistry.load(path, num_hashes=2, num_buckets=32, verify=True) == reg
    more = build_word_list(200, seed=8)
    assert loaded.register(more).tolist() == reg.register(more).tolist()
    assert loaded == reg
    # The header is readable JSON with the rules and versions.
    lines = path.read_bytes().split(b"\n", 2)
    header = json.loads(lines[2][: int(lines[1])])
    assert header["format_version"] == 1 and header["num_hashes"] == 2 and header["num_buckets"] == 32
    assert "mmh3_version" in header and len(header["sha256"]) == 64 and "seed H-1+r" in header["seed_rule"]


def test_empty_registry_round_trip(tmp_path):
    reg = SignatureRegistry(4, 16384)
    loaded = SignatureRegistry.load(reg.save(tmp_path / "empty.sigreg"))
    assert loaded == reg and len(loaded) == 0 and loaded.table().shape == (0, 4)
    assert loaded.register(["a"]).tolist() == [0]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(token_text, max_size=60), num_hashes=st.sampled_from([1, 2, 4]))
def test_round_trip_property(tokens, num_hashes):
    reg = SignatureRegistry(num_hashes, 128)
    reg.register(tokens)
    with tempfile.TemporaryDirectory() as tmp:
        loaded = SignatureRegistry.load(reg.save(Path(tmp) / "r.sigreg"), verify=True)
    assert loaded == reg


@pytest.fixture(scope="module")
def saved_bytes(tmp_path_factory) -> bytes:
    path = _registry_with_rehashes().save(tmp_path_factory.mktemp("reg") / "vocab.sigreg")
    return path.read_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.floats(0, 1, exclude_max=True), mask=st.integers(1, 255))
def test_any_single_byte_corruption_is_refused(saved_bytes, tmp_path, position, mask):
    data = bytearray(saved_bytes)
    i = int(position * len(data))
    data[i] ^= mask
    path = tmp_path / "corrupt.sigreg"
    path.write_bytes(bytes(data))
    with pytest.raises(RegistryFileError, match=re.escape(str(path))):
        SignatureRegistry.load(path)


def test_corruption_messages(saved_bytes, tmp_path):
    path = tmp_path / "bad.sigreg"
    path.write_bytes(saved_bytes[:-10])
    with pytest.raises(RegistryFileError, match="checksum does not match.*restore it from a copy"):
        SignatureRegistry.load(path)
    path.write_bytes(b"PK\x03\x04" + saved_bytes[4:])
    with pytest.raises(RegistryFileError, match="not a signature-registry file"):
        SignatureRegistry.load(path)
    with pytest.raises(FileNotFoundError, match="SignatureRegistry.save"):
        SignatureRegistry.load(tmp_path / "missing.sigreg")


def _rewrite(src: Path, dst: Path, edit) -> Path:
    """Re-encode a registry file after ``edit(header, arrays)``, with a valid checksum for the edited content."""
    header, arrays = _decode_file(src)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    edit(header, arrays)
    dst.write_bytes(_encode_file(header, arrays))
    return dst


def test_mismatched_files_are_refused_with_the_fix(tmp_path):
    src = _registry_with_rehashes().save(tmp_path / "ok.sigreg")
    with pytest.raises(RegistryFileError, match=r"num_hashes=2, num_buckets=32, but num_hashes=4, num_buckets=32"):
        SignatureRegistry.load(src, num_hashes=4)
    with pytest.raises(RegistryFileError, match="num_buckets=16384 was asked for"):
        SignatureRegistry.load(src, num_buckets=16384)

    def newer_format(header, arrays):
        header["format_version"] = 2

    with pytest.raises(RegistryFileError, match="format version 2, but this code reads version 1"):
        SignatureRegistry.load(_rewrite(src, tmp_path / "v2.sigreg", newer_format))

    def other_mmh3(header, arrays):
        header["mmh3_version"] = "9.9.9"
        header["mmh3_fingerprint"] = "0" * 64

    with pytest.raises(RegistryFileError, match=r"written with mmh3 9\.9\.9.*pip install mmh3==9\.9\.9"):
        SignatureRegistry.load(_rewrite(src, tmp_path / "mmh3.sigreg", other_mmh3))

    def only_version_differs(header, arrays):
        header["mmh3_version"] = "0.0-same-hashes"

    assert len(SignatureRegistry.load(_rewrite(src, tmp_path / "same.sigreg", only_version_differs))) > 0

    def duplicate_signature(header, arrays):
        arrays["signatures"][1] = arrays["signatures"][0]

    with pytest.raises(RegistryFileError, match="duplicate"):
        SignatureRegistry.load(_rewrite(src, tmp_path / "dup.sigreg", duplicate_signature))

    def out_of_range(header, arrays):
        arrays["signatures"][0, 0] = 0

    with pytest.raises(RegistryFileError, match="inconsistent"):
        SignatureRegistry.load(_rewrite(src, tmp_path / "range.sigreg", out_of_range))

    def swapped_rows(header, arrays):  # still unique and in range, but not what mmh3 gives for these tokens
        arrays["signatures"][[0, 1]] = arrays["signatures"][[1, 0]]

    swapped = _rewrite(src, tmp_path / "swap.sigreg", swapped_rows)
    assert len(SignatureRegistry.load(swapped)) > 0  # structurally valid ...
    with pytest.raises(RegistryFileError, match="differ from those the installed mmh3 computes"):
        SignatureRegistry.load(swapped, verify=True)  # ... but verification recomputes every signature


def test_registry_module_documents_its_file_format():
    from hashlib_core.hashing import registry_file

    assert "HLCSIGREG" in registry_file.__doc__ and registry_module.FORMAT_VERSION == registry_file.FORMAT_VERSION == 1
    assert "hashlib_core.hashing.registry_file" in registry_module.__doc__
