"""Hashed n-gram memories (hashlib_core.embeddings.memories): each hash equals its reference's rule recomputed with
Python integers (BLT's int64 wrap-around included), parameters are counted exactly, and a memory learns."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.embeddings import memories

IDS = torch.tensor([[5, 17, 3, 250, 9], [0, 1, 2, 3, 4]])


def _wrap(x: int) -> int:
    """Python int -> the int64 two's-complement value."""
    return (x + 2**63) % 2**64 - 2**63


def test_blt_prime_powers_wrap_as_int64():
    # the reference's overflow example (implementation notes): 1000000007 ** 3 in int64
    assert int(torch.tensor(1000000007, dtype=torch.int64) ** 3) == -4377642754154037417
    assert _wrap(1000000007 ** 3) == -4377642754154037417


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=12), st.integers(1, 6), st.integers(0, 10),
       st.integers(2, 10**6))
def test_blt_hashes_equal_the_reference_rule(seq, n, f, max_hash):
    got = memories.blt_ngram_hashes(torch.tensor([seq]), n, f, max_hash)[0].tolist()
    p, padded = memories.BLT_PRIMES[f], [0] * (n - 1) + seq
    expected = []
    for t in range(len(seq)):
        window = padded[t:t + n]
        total = 0
        for k, x in enumerate(window):
            total = _wrap(total + _wrap(x * _wrap(p ** k)))
        expected.append(total % max_hash)       # torch's % follows the divisor's sign, as Python's
    assert got == expected


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 999), min_size=1, max_size=10), st.integers(2, 4), st.integers(2, 10**7))
def test_over_encoding_ids_equal_the_formula(seq, order, modulus):
    got = memories.over_encoding_ids(torch.tensor([seq]), 1000, order, modulus)[0].tolist()
    padded = [0] * (order - 1) + seq
    expected = [sum(padded[t + order - 1 - j] * 1000 ** j for j in range(order)) % modulus for t in range(len(seq))]
    assert got == expected


def test_bigram_hash_ids_follow_the_records_rule():
    got = memories.bigram_hash_ids(IDS, 4096)
    assert got[:, 0].tolist() == [4095, 4095]
    assert got[0, 1] == ((36313 * 17) ^ (27191 * 5)) % 4095
    assert got[1, 4] == ((36313 * 4) ^ (27191 * 3)) % 4095


def test_memories_count_their_parameters_exactly():
    blt = memories.BLTHashNgramEmbedding(16, max_hash=101, sizes=(3, 4), num_functions=2)
    assert blt.embedding_parameter_count() == 2 * 2 * 101 * 16
    over = memories.OverEncodingEmbedding(300, 16, modulus=17, max_order=3, tables_per_order=2)
    assert over.sizes == (17, 19, 21, 23)             # marin's OverEncoding test: one running index over the tables
    assert over.embedding_parameter_count() == sum(s * 4 for s in over.sizes) + 4 * 4 * 16
    big = memories.BigramHashEmbedding(16, buckets=64, width=8)
    assert big.embedding_parameter_count() == 64 * 8 + 8 * 16 + 1
    for module in (blt, over, big):
        assert module(IDS).shape == (2, 5, 16)


def test_a_blt_memory_sums_its_tables():
    blt = memories.BLTHashNgramEmbedding(8, max_hash=97, sizes=(2, 3), num_functions=1)
    expected = sum(blt.tables[i](memories.blt_ngram_hashes(IDS, n, 0, 97)) for i, n in enumerate((2, 3)))
    torch.testing.assert_close(blt(IDS), expected)


def test_the_bigram_memory_starts_silent_and_learns():
    big = memories.BigramHashEmbedding(8, buckets=32, width=4)
    assert torch.equal(big(IDS), torch.zeros(2, 5, 8))
    optimiser = torch.optim.SGD(big.parameters(), lr=0.5)
    target = torch.ones(2, 5, 8)
    losses = []
    for _ in range(3):
        loss = ((big(IDS) - target) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert big.projection.weight.abs().sum() > 0 and losses[-1] < losses[0]


def test_the_residual_bigram_is_a_zero_full_width_table_with_one_scale_per_block():
    """The speedrun form (modded-nanogpt's BigramHashEmbedding record): B x d rows at zero, indexed by the bigram
    hash, and a scale per block starting at 0.1; B d + layers parameters; it learns from its first step."""
    res = memories.ResidualBigramEmbedding(16, buckets=64, layers=3)
    assert res.embedding_parameter_count() == 64 * 16 + 3
    assert res.lambdas.tolist() == pytest.approx([0.1, 0.1, 0.1])
    assert torch.equal(res(IDS), torch.zeros(2, 5, 16))
    with torch.no_grad():
        res.table.weight.copy_(torch.arange(64 * 16, dtype=torch.float32).view(64, 16))
    torch.testing.assert_close(res(IDS), res.table.weight[memories.bigram_hash_ids(IDS, 64)])
    with torch.no_grad():
        res.table.weight.zero_()
    loss = ((res.lambdas[0] * res(IDS) - 1.0) ** 2).mean()
    loss.backward()
    assert res.table.weight.grad.abs().sum() > 0          # zero rows, a non-zero scale: the rows move at once
    with pytest.raises(ValueError, match="layers"):
        memories.ResidualBigramEmbedding(16, buckets=64, layers=0)


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match=r"\(batch, length\)"):
        memories.blt_ngram_hashes(torch.tensor([1, 2]), 3)
    with pytest.raises(ValueError, match="token ids must lie in"):
        memories.over_encoding_ids(torch.tensor([[1, 1000]]), 1000, 2, 17)
    with pytest.raises(ValueError, match="split into k"):
        memories.OverEncodingEmbedding(100, 10, 17, max_order=3, tables_per_order=4)
    with pytest.raises(ValueError, match="hash_func_nb"):
        memories.blt_ngram_hashes(IDS, 2, hash_func_nb=11)


def test_engram_canonicalises_then_mixes_with_odd_multipliers():
    strings = ["[PAD]", "The", "the", "Café", "cafe", "x  y", "x y", "dog"]
    assert memories.canonical_ids(strings).tolist() == [0, 1, 1, 3, 3, 5, 5, 7]
    assert memories.primes_above(10, 4) == [11, 13, 17, 19]
    engram = memories.EngramMemory(strings, 8, rows=50, heads=2, head_width=4, seed=1)
    assert all(int(m) % 2 == 1 for n in (2, 3) for m in getattr(engram, f"mult_{n}"))
    ids = torch.tensor([[1, 7, 4], [2, 7, 3]])      # "The dog cafe" and "the dog Café": the same canonical ids
    torch.testing.assert_close(engram.retrieve(ids)[0], engram.retrieve(ids)[1])
    m = engram.mult_2.tolist()
    canon = [1, 7, 3]
    expected = [_wrap(canon[t] * m[0]) ^ _wrap((canon[t - 1] if t else 0) * m[1]) for t in range(3)]
    assert memories.engram_mix(torch.tensor([canon]), engram.mult_2)[0].tolist() == expected
    hidden = torch.randn(2, 3, 8)
    out = engram(ids, hidden)
    assert out.shape == (2, 3, 8)
    # the convolution starts at zero: the output is the gated value alone, and causal (position 0 ignores later ones)
    e = engram.retrieve(ids)
    s = (engram.key_norm(engram.key(e)) * engram.hidden_norm(hidden)).sum(-1, keepdim=True) / 8 ** 0.5
    torch.testing.assert_close(out, torch.sigmoid(torch.sign(s) * s.abs().sqrt()) * engram.value(e))
    with torch.no_grad():
        engram.conv.weight.normal_()
    changed = ids.clone()
    changed[:, 2] = 0
    torch.testing.assert_close(engram(changed, hidden)[:, 0], engram(ids, hidden)[:, 0])


def test_engram_keys_follow_the_released_compressed_tokenizer_on_a_byte_level_bpe():
    """The released CompressedTokenizer normalises each id's decoded text: a byte-level BPE's "Ġthe" (" the") and
    "the" share a key, "Ġ" (" ") stays apart from "g", and a piece that is part of a character keeps its raw string."""
    from hashlib_core.bpe import train_bpe

    tok = train_bpe(["the gin in The", "the gin in the café"] * 20, 300)
    strings = [tok.id_to_token(i) for i in range(tok.get_vocab_size())]
    texts = [tok.decode([i], skip_special_tokens=False) for i in range(len(strings))]
    keys = {s: memories.engram_key(s, t) for s, t in zip(strings, texts)}
    assert keys["Ġthe"] == keys["the"] == keys["ĠThe"] == "the"
    assert keys["Ġ"] == " " and keys["g"] == "g" and keys["Ġ"] != keys["g"]
    assert keys["Ġgin"] == "gin" != keys.get("Ġin", "in ")
    half = next(s for s, t in zip(strings, texts) if "\ufffd" in t)            # a lone byte of "é"
    assert keys[half] == half
    ids = memories.canonical_ids(strings, texts)
    assert ids[strings.index("Ġthe")] == ids[strings.index("the")] != ids[strings.index("Ġ")]
    assert memories.canonical_ids(strings)[strings.index("Ġthe")] != memories.canonical_ids(strings)[
        strings.index("the")]                                  # without decoding, the marker kept them apart
    with pytest.raises(ValueError, match="one per token"):
        memories.canonical_ids(strings, texts[:-1])
    # whitespace: runs become one space and the text is stripped, a lone space stays a space
    assert memories.engram_key("x", "  A\t B \n") == "a b" and memories.engram_key("x", "\n") == " "
