"""The family catalogue (hashlib_core.embeddings.catalogue, .compressed): every family builds from strings, a budget
and a width; its codes are the hashes its source describes (recomputed here independently), its parameters are
counted exactly, a saved state dict reloads the same hashes, and bad input is refused with a clear error."""
from __future__ import annotations

import hashlib
import hmac
import math

import mmh3
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.embeddings import catalogue
from hashlib_core.embeddings.compressed import (MERSENNE_61, DenseHashEmbedding, ImportanceHashEmbedding,
                                                QuotientRemainderEmbedding, RobeEmbedding, RowCombinationEmbedding,
                                                universal_hash)

#: a small vocabulary in the shape of BERT's: specials, words, continuation pieces, accents, a CJK character
VOCAB = ["[PAD]", "[UNK]", "the", "of", "hashing", "##ing", "##s", "embed", "café", "naïve", "東", "x", "a", "is",
         "Table", "table", "##ed", "bloom", "filter", "2026"] + [f"w{i}" for i in range(280)]
V, D = len(VOCAB), 16
IDS = torch.tensor([[2, 4, 5, 8], [10, 14, 15, 299]])


def _build(name: str, fraction: float = 0.5, seed: int = 0):
    budget = V * D if name == "full" else int(V * D * fraction)
    return catalogue.build(name, VOCAB, budget, D, seed=seed)


#: families that read a staged file (the LSH family: roberta-base's BPE)
NEEDS_DATA = {"lsh-emb"}


def _families():
    return [pytest.param(n, marks=pytest.mark.needs_data) if n in NEEDS_DATA else n for n in catalogue.FAMILIES]


@pytest.fixture
def need_data(request):
    """The staged mirror for the families that read it (skipped without it, a failure in CI)."""
    if request.node.callspec.params.get("name") in NEEDS_DATA:
        request.getfixturevalue("mirror")


@pytest.mark.parametrize("name", _families())
def test_every_family_embeds_ids_within_its_budget(name, need_data):
    emb = _build(name)
    out = emb(IDS)
    assert out.shape == (2, 4, D) and torch.isfinite(out).all()
    sizing = catalogue.FAMILIES[name].sizing
    counted = emb.embedding_parameter_count()
    # every parameter builds a token's vector, but Pool's padding codeword (row 0 of the released code)
    assert counted == sum(p.numel() for p in emb.parameters()) - (D if name == "md5-pool" else 0)
    if sizing == "budget":
        # the budget is filled up to one unit of the family's size: a row (d; d + 2 with importance weights; 2 d
        # for two signature tables), or one hidden unit of DHE's MLP (k + 1 + d)
        unit = {"dhe": 1024 + 1 + D, "hash-embedding": D + 2, "gated-signatures": 2 * D, "low-rank": V + D}.get(name, D)
        if name == "tt-rec":   # one rank more: 2 n f + n f (2 r + 1)
            m = emb.module
            unit = 2 * m.n * m.factor + m.n * m.factor * (2 * m.rank + 1)
        budget = int(V * D * 0.5)
        if name == "superbloom":   # two maps of ceil(V / alpha) rows, alpha the smallest that fits
            per_map = budget // D // 2
            assert counted == 2 * -(-V // -(-V // per_map)) * D
        else:
            assert budget - unit < counted <= budget, (name, counted, budget)
    elif sizing == "none":
        assert counted == 0
    elif sizing == "full":
        assert counted == V * D


def test_fixed_families_have_their_papers_parameter_counts():
    # Pool: a 2^10 + 1 row codebook and ceil(128 / 10) = 13 weight rows; Add: the differences of its 128 codebooks
    # (the shared part is the backbone's token-type row); Proj: 128 x d; the MinHash projection: a 512 x d dense layer
    # with its bias and a LayerNorm
    assert _build("md5-pool").embedding_parameter_count() == (2 ** 10 + 1) * D + 13 * D - D
    add = _build("md5-add")
    assert add.embedding_parameter_count() == 128 * D and add.module.storage == "differences"
    assert _build("md5-proj").embedding_parameter_count() == 128 * D
    assert _build("minhash-projection").embedding_parameter_count() == 512 * D + D + 2 * D


def test_hashing_trick_and_bloom_codes_are_murmur3_of_the_strings():
    emb = _build("bloom")
    rows = emb.module.num_rows
    assert rows == int(V * D * 0.5) // D
    for i in (2, 5, 10):
        assert emb.codes[i].tolist() == [mmh3.hash(VOCAB[i], j, signed=False) % rows for j in (0, 1)]
    # the mean of the two rows (a token whose two hashes meet reads that row twice)
    expected = emb.module.weight[emb.codes[IDS]].mean(dim=-2)
    torch.testing.assert_close(emb(IDS), expected)
    trick = _build("hashing-trick", seed=7)
    assert trick.codes[4, 0] == mmh3.hash("hashing", 7, signed=False) % trick.module.num_rows
    # the hash itself: MurmurHash3 x86 32-bit, the mmh3 README's examples (signed there)
    assert mmh3.hash("foo", 0, signed=False) == -156908512 % 2**32
    assert mmh3.hash("foo", 42, signed=False) == -1322301282 % 2**32


def test_md5_families_read_hashformers_hmac_md5():
    emb = _build("md5-emb")
    rows = emb.module.num_rows
    digest = hmac.new(b"en", "naïve".encode(), hashlib.md5).digest()
    assert emb.codes[9, 0] == int.from_bytes(digest, "big") % rows
    bits = _build("md5-add").codes[9]
    assert bits.tolist() == [int(c) for c in format(int.from_bytes(digest, "big"), "0128b")]


def test_hash_embedding_weights_its_pool_rows_by_a_hashed_importance_row():
    emb = _build("hash-embedding")
    module: ImportanceHashEmbedding = emb.module
    rows = module.num_buckets
    assert rows == int(V * D * 0.5) // (D + 2)
    assert emb.codes[4].tolist() == [mmh3.hash("hashing", 0, signed=False) % rows,
                                     mmh3.hash("hashing", 1, signed=False) % rows,
                                     mmh3.hash("hashing", 2, signed=False) % rows]
    with torch.no_grad():
        module.importance.normal_()
    c = emb.codes[4]
    expected = module.importance[c[2], 0] * module.pool[c[0]] + module.importance[c[2], 1] * module.pool[c[1]]
    torch.testing.assert_close(emb(torch.tensor([4]))[0], expected)


def test_quotient_remainder_never_collides_and_fits_its_rows():
    emb = _build("quotient-remainder", 0.25)
    module: QuotientRemainderEmbedding = emb.module
    rows = int(V * D * 0.25) // D
    assert module.quotient.shape[0] + module.remainder.shape[0] <= rows
    assert module.collisions() == 0
    i = torch.tensor([123])
    torch.testing.assert_close(emb(i)[0], module.quotient[123 // module.modulus] * module.remainder[123 % module.modulus])
    with pytest.raises(ValueError, match="raise the budget"):
        catalogue.qr_modulus(30522, 300)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 50_000), st.integers(0, 400))
def test_qr_modulus_is_the_largest_that_fits(num_ids, extra):
    rows = 2 * math.isqrt(num_ids) + 2 + extra
    m = catalogue.qr_modulus(num_ids, rows)
    assert m + -(-num_ids // m) <= rows
    assert all(k + -(-num_ids // k) > rows for k in range(m + 1, min(rows, m + 50)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=8), st.integers(1, 2**31 - 1),
       st.integers(0, 2**31 - 1), st.integers(2, 10**9))
def test_universal_hash_equals_python_integers(values, a, b, modulus):
    fast = universal_hash(torch.tensor(values), torch.tensor([a]), torch.tensor([b]), modulus)[:, 0].tolist()
    assert fast == [((a * x + b) % MERSENNE_61) % modulus for x in values]


def test_robe_reads_wrapping_chunks_at_hashed_offsets():
    module = RobeEmbedding(num_ids=50, size=37, embedding_dim=8, chunk=4, seed=3)
    ids = torch.tensor([0, 7, 49])
    out = module(ids)
    a, b = int(module.hash_a), int(module.hash_b)
    for row, i in enumerate(ids.tolist()):
        for c in range(2):
            start = ((a * (2 * i + c) + b) % MERSENNE_61) % 37
            expected = torch.stack([module.weight[(start + z) % 37] for z in range(4)])
            torch.testing.assert_close(out[row, 4 * c: 4 * c + 4], expected)
    assert module.embedding_parameter_count() == 37


def test_dhe_encodes_ids_in_minus_one_to_one_then_an_mlp():
    module = DenseHashEmbedding(num_ids=100, embedding_dim=8, hidden=5, num_hashes=16, buckets=1000, seed=1)
    enc = module.encode(torch.tensor([3]))[0]
    a, b = module.hash_a.tolist(), module.hash_b.tolist()
    expected = [(((x * 3 + y) % MERSENNE_61) % 1000) * 2 / 999 - 1 for x, y in zip(a, b)]
    torch.testing.assert_close(enc, torch.tensor(expected, dtype=torch.float32))
    assert enc.min() >= -1 and enc.max() <= 1
    assert module.embedding_parameter_count() == 16 * 5 + 5 + 5 * 8 + 8


def test_row_combination_skips_padding_codes():
    module = RowCombinationEmbedding(6, 4, "mean")
    codes = torch.tensor([[1, 3, -1], [-1, -1, -1]])
    out = module(codes)
    torch.testing.assert_close(out[0], (module.weight[1] + module.weight[3]) / 2)
    assert torch.equal(out[1], torch.zeros(4))
    with pytest.raises(ValueError, match=r"codes must lie in \[-1, 6\)"):
        module(torch.tensor([[6]]))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.sampled_from(["mean", "sum"]), st.integers(0, 2**31 - 1))
def test_row_combination_equals_the_gather_reference(batch, width, combine, seed):
    """The embedding_bag path gives the values and the gradients of gathering the rows and summing them."""
    g = torch.Generator().manual_seed(seed)
    module = RowCombinationEmbedding(7, 3, combine)
    codes = torch.randint(-1, 7, (batch, 2, width), generator=g)
    present = (codes >= 0).unsqueeze(-1).float()
    weight = module.weight.detach().clone().requires_grad_(True)
    reference = (weight[codes.clamp(min=0)] * present).sum(-2)
    if combine == "mean":
        reference = reference / present.sum(-2).clamp(min=1)
    out = module(codes)
    torch.testing.assert_close(out, reference)
    out.square().sum().backward()
    reference.square().sum().backward()
    torch.testing.assert_close(module.weight.grad, weight.grad)


@pytest.mark.parametrize("name", [n for n, f in catalogue.FAMILIES.items() if f.sizing == "budget"])
def test_minimum_budget_is_the_least_that_builds_within_budget(name):
    """Every budget family builds within its minimum and refuses one parameter less (no family holds more than its
    budget: a row table at a budget under d used to hold d parameters)."""
    strings = [f"tok{i}" for i in range(300)]
    least = catalogue.minimum_budget(name, len(strings), 8)
    assert least >= 1
    assert catalogue.build(name, strings, least, 8).embedding_parameter_count() <= least
    if least > 1:
        with pytest.raises(ValueError, match="budget|needs at least|rank 1 needs"):
            catalogue.build(name, strings, least - 1, 8)


def test_fixed_and_full_families_minimums():
    strings = [f"tok{i}" for i in range(300)]
    assert catalogue.minimum_budget("hashing-trick", len(strings), 16) == 16          # one row of d
    with pytest.raises(ValueError, match=r"holds 16 parameters, over the budget 1; give a budget of at least 16"):
        catalogue.build("hashing-trick", strings, 1, 16)
    assert catalogue.minimum_budget("full", len(strings), 8) == 300 * 8
    fixed = [n for n, f in catalogue.FAMILIES.items() if f.sizing in ("fixed", "none")]
    assert fixed and all(catalogue.minimum_budget(n, len(strings), 8) == 1 for n in fixed)


@pytest.mark.parametrize("name", ["hashing-trick", "robe"])
def test_a_budget_beyond_memory_is_refused_before_torch_allocates(name):
    with pytest.raises(ValueError, match=r"needs [\d,.]+ GiB of float32 weights, more than this machine's .* memory"):
        catalogue.build(name, ["a", "b"], 10**15, 16)


def test_tfree_rows_follow_the_reference_md5_rule():
    rows = 1000
    trigram = " he".encode()
    t = trigram[0] + 256 * trigram[1] + 65536 * trigram[2]
    expected, k = [], 0
    for k in range(4):
        j = 0
        while (r := int(hashlib.md5(f"{t}_{k}_{j}".encode()).hexdigest(), 16) % rows) in expected:
            j += 1
        expected.append(r)
    assert catalogue.tfree_rows(trigram, rows, population=4) == sorted(expected)
    # the released rule (vocab_population_partial_lowercase): a case variant of a trigram of ASCII letters and
    # spaces takes the LAST `shared` sorted rows of its lower-cased trigram and keeps its own first ones
    own = catalogue.tfree_rows(" He".encode(), rows, population=4)
    upper = catalogue.tfree_rows(" He".encode(), rows, population=4, shared=2)
    assert upper[2:] == sorted(expected)[2:] and upper[:2] == own[:2] and own[2:] != sorted(expected)[2:]
    assert catalogue.tfree_rows(b" he", rows, population=4, shared=2) == sorted(expected)    # lower case: its own
    # a trigram with a digit or punctuation shares nothing, though bytes.lower() would change it
    for other in (b"A1b", b"B.c", "Ä".encode()[:1] + b"ab"):
        assert catalogue.tfree_rows(other, rows, 4, shared=2) == catalogue.tfree_rows(other, rows, 4)
    with pytest.raises(ValueError, match="shares 0 to population"):
        catalogue.tfree_rows(b"abc", rows, 4, shared=5)
    # a word's rows: the union of its trigrams' (" a " has one trigram)
    assert catalogue.tfree_word_rows("a", rows, 4) == sorted(set(catalogue.tfree_rows(b" a ", rows, 4)))
    # a continuation piece is hashed without its marker
    emb = _build("t-free")
    n = emb.module.num_rows
    word = catalogue.tfree_word_rows("ing", n, min(10, n), shared=2)
    assert emb.codes[5][emb.codes[5] >= 0].tolist() == word


def test_superbloom_input_sums_one_row_of_each_map():
    emb = _build("superbloom")
    codes = emb.codes
    per_map = emb.module.num_rows // 2
    assert codes[:, 0].max() < per_map <= codes[:, 1].min()
    torch.testing.assert_close(emb(torch.tensor([7]))[0], emb.module.weight[codes[7]].sum(dim=0))


def test_gated_signatures_are_unique_per_token():
    emb = _build("gated-signatures")
    table = emb.module.inner.hash_map
    assert len({tuple(r) for r in table.tolist()}) == V


@pytest.mark.parametrize("name", _families())
def test_a_saved_state_dict_reloads_the_same_hashes(name, need_data):
    first, other = _build(name, seed=0), _build(name, seed=5)
    other.load_state_dict(first.state_dict())
    torch.testing.assert_close(other(IDS), first(IDS))


def test_the_same_seed_builds_the_same_model():
    for name in ("bloom", "robe", "dhe", "superbloom"):
        torch.testing.assert_close(_build(name, seed=2)(IDS), _build(name, seed=2)(IDS))
    assert not torch.equal(_build("bloom", seed=2).codes, _build("bloom", seed=3).codes)


def test_lsh_emb_hashes_the_piece_without_its_marker(mirror):
    from hashlib_core.bpe import roberta_bpe
    from hashlib_core.hashing.lsh import LSHBucketHasher

    emb = _build("lsh-emb")
    hasher = LSHBucketHasher(roberta_bpe(), num_buckets=emb.module.num_rows, offset=0)
    assert emb.codes[5, 0] == hasher.index("ing") and emb.codes[4, 0] == hasher.index("hashing")


def test_lookup_bytes_count_what_the_hash_keeps():
    assert _build("full").lookup_bytes() == 0
    assert _build("hashing-trick").lookup_bytes() == V * 8
    assert _build("md5-proj").lookup_bytes() == V * 128
    assert _build("dynamic-ngram").lookup_bytes() == V * D * 4


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(KeyError, match="unknown family 'bloomy'; the catalogue has full, hashing-trick"):
        catalogue.build("bloomy", VOCAB, 100, D)
    with pytest.raises(ValueError, match="full table needs"):
        catalogue.build("full", VOCAB, V * D - 1, D)
    with pytest.raises(ValueError, match="DHE with k = 1024 hashes needs"):
        catalogue.build("dhe", VOCAB, 500, D)
    with pytest.raises(ValueError, match="non-empty token strings"):
        catalogue.build("bloom", ["a", ""], 100, D)
    with pytest.raises(ValueError, match="budget must be a positive number"):
        catalogue.build("bloom", VOCAB, 0, D)
    emb = _build("bloom")
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 300\)"):
        emb(torch.tensor([300]))
    with pytest.raises(TypeError, match="int64 tensor of token ids"):
        emb(torch.tensor([1.0]))


def test_collisions_count_shared_signatures_against_the_birthday_bound():
    from hashlib_core.embeddings import diagnostics

    # the bound: V (1 - (1 - 1/C)^(V-1)); two tokens in two values collide with probability 1/2 each way
    assert diagnostics.expected_colliding(2, 2.0) == pytest.approx(1.0)
    assert diagnostics.expected_colliding(3, 10.0) == pytest.approx(3 * (1 - 0.9 ** 2))
    assert diagnostics.expected_colliding(100, math.inf) == 0.0
    trick = catalogue.build("hashing-trick", VOCAB, 10 * D, D)          # 300 tokens into 10 rows: all collide
    found = diagnostics.collisions(trick)
    assert found["colliding"] == V and found["code_space"] == 10.0
    assert found["expected"] == pytest.approx(V * (1 - 0.9 ** (V - 1)))
    # counted by hand from the codes
    rows = trick.codes[:, 0].tolist()
    assert found["colliding"] == sum(rows.count(r) > 1 for r in rows)
    bloom = catalogue.build("bloom", VOCAB, 40 * D, D)
    pairs = [tuple(sorted(r)) for r in bloom.codes.tolist()]
    assert diagnostics.collisions(bloom)["colliding"] == sum(pairs.count(p) > 1 for p in pairs)
    assert diagnostics.collisions(bloom)["code_space"] == 40 * 41 / 2
    for name in ("full", "quotient-remainder", "gated-signatures", "md5-add", "robe", "dhe"):
        found = diagnostics.collisions(_build(name))
        assert found["colliding"] == 0, name
    assert diagnostics.collisions(_build("md5-proj"))["code_space"] == 2.0 ** 128


def test_the_families_benchmark_writes_one_row_per_family(mirror, tmp_path, monkeypatch):
    import json

    from hashlib_core.benchmarks.families import main

    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path))
    payload = main(["--families", "bloom", "robe", "--fraction", "0.01", "--batch", "2", "--length", "8",
                    "--repeats", "1"])
    written = json.loads((tmp_path / "benchmarks" / "quick" / "families.json").read_text(encoding="utf-8"))
    assert [r["family"] for r in written["data"]["results"]] == ["bloom", "robe"]
    assert payload["vocab_size"] == 30522 and written["meta"]["device"] == "cpu"
    budget = int(30522 * 64 * 0.01)
    for row in payload["results"]:
        assert row["budget"] == budget and row["parameters"] <= budget and row["tokens_per_s"] > 0
        assert row["share_of_full"] == row["parameters"] / (30522 * 64)


def test_concatenated_compositional_slices_read_their_own_blocks():
    emb = _build("ce-concat")
    module, rows = emb.module, emb.module.num_rows
    assert module.num_chunks == 4 and module.embedding_parameter_count() == rows * D
    for c in range(4):
        assert emb.codes[:, c].tolist() == [mmh3.hash(s, c, signed=False) % rows for s in VOCAB]
    out = emb(torch.tensor([9]))[0]
    for c in range(4):
        torch.testing.assert_close(out[4 * c: 4 * c + 4], module.weight[c * rows + int(emb.codes[9, c])])


def test_tensor_train_is_the_sum_over_both_ranks_of_three_cores():
    from hashlib_core.embeddings.factorized import tt_rank

    emb = _build("tt-rec")
    m = emb.module
    assert (m.n, m.factor) == (7, 3) and m.n ** 3 >= V > (m.n - 1) ** 3      # 300 ids, d = 16 cropped from 27
    assert m.rank == tt_rank(V, D, int(V * D * 0.5))
    assert m.embedding_parameter_count() == 2 * 7 * 3 * m.rank + 7 * 3 * m.rank ** 2
    i = 123
    digits = (i % 7, (i // 7) % 7, i // 49)
    assert emb.module.digits(torch.tensor([i]))[0].tolist() == list(digits)
    full = torch.zeros(3, 3, 3)
    for a in range(3):
        for b in range(3):
            for c in range(3):
                full[a, b, c] = sum(m.start[digits[0], a, s] * m.middle[digits[1], b, s, r] * m.end[digits[2], c, r]
                                    for s in range(m.rank) for r in range(m.rank))
    torch.testing.assert_close(emb(torch.tensor([i]))[0], full.reshape(-1)[:D])
    assert len({tuple(r) for r in m.digits(torch.arange(V)).tolist()}) == V


@given(st.integers(1, 10**6), st.integers(1, 4096))
def test_tt_shape_is_the_least_cube_that_covers(num_ids, dim):
    from hashlib_core.embeddings.factorized import tt_shape

    n, f = tt_shape(num_ids, dim)
    assert n ** 3 >= num_ids > (n - 1) ** 3 or n == 1
    assert f ** 3 >= dim > (f - 1) ** 3 or f == 1


def test_low_rank_projects_a_narrow_table():
    emb = _build("low-rank")
    m = emb.module
    assert m.rank == (int(V * D * 0.5) - D) // (V + D)
    assert m.embedding_parameter_count() == V * m.rank + m.rank * D + D
    torch.testing.assert_close(emb(torch.tensor([4]))[0], m.table.weight[4] @ m.project.weight.T + m.project.bias)


def test_hashed_nets_read_each_entry_from_a_signed_hashed_slot():
    emb = _build("hashed-nets")
    m = emb.module
    size = int(V * D * 0.5)
    assert m.embedding_parameter_count() == size
    (a1, a2), (b1, b2) = m.hash_a.tolist(), m.hash_b.tolist()
    out = emb(torch.tensor([17]))[0].detach()
    for j in range(D):
        key = 17 * D + j
        slot = ((a1 * key + b1) % MERSENNE_61) % size
        sign = 1 - 2 * (((a2 * key + b2) % MERSENNE_61) % 2)
        assert float(out[j]) == pytest.approx(sign * float(m.weight.detach()[slot]))
    signs = m.slots(torch.arange(V))[1]
    assert set(signs.unique().tolist()) == {-1, 1}


@pytest.mark.parametrize("name", ["ce-concat", "tt-rec", "low-rank", "hashed-nets"])
def test_new_families_start_at_the_catalogues_scale(name):
    strings = [f"tok{i}" for i in range(2000)]
    torch.manual_seed(0)
    emb = catalogue.build(name, strings, 2000 * 64 // 4, 64, seed=0)
    std = float(emb(torch.arange(2000)).detach().std())
    assert 0.01 < std < 0.04, (name, std)


def test_gated_signatures_refuse_a_vocabulary_that_repeats_a_string():
    with pytest.raises(ValueError, match=r"repeats 'a' \(ids 0 and 2\); pass distinct strings"):
        catalogue.build("gated-signatures", ["a", "b", "a"], 1 << 16, 16)
    assert catalogue.build("hashing-trick", ["a", "b", "a"], 1 << 10, 16).codes[0].tolist() == \
        catalogue.build("hashing-trick", ["a", "b", "a"], 1 << 10, 16).codes[2].tolist()   # the others hash alike
