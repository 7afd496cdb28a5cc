"""MultiHashFormer Hash Encoder: gated compositional embedding (section 3.1) and signature-table checks."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.embeddings.multihash import GatedCompositionalEmbedding, validate_signature_table


def collision_free_table(vocab_size: int, num_hashes: int, num_buckets: int, seed: int) -> torch.Tensor:
    """Distinct signatures in [1, B): random distinct codes written in base B-1, plus 1."""
    gen = torch.Generator().manual_seed(seed)
    base = num_buckets - 1
    codes = torch.randperm(base**num_hashes, generator=gen)[:vocab_size]
    return torch.stack([(codes // base**k) % base + 1 for k in range(num_hashes)], dim=1)


def make_embedding(vocab=20, hashes=3, buckets=7, d=8, dz=4, seed=0) -> GatedCompositionalEmbedding:
    torch.manual_seed(seed)
    emb = GatedCompositionalEmbedding(vocab, hashes, buckets, d, dz)
    emb.set_signature_table(collision_free_table(vocab, hashes, buckets, seed))
    return emb


def test_compose_matches_the_equation_written_out():
    emb = make_embedding()
    sig = emb.hash_map[torch.tensor([3, 0, 19])]
    got = emb.compose(sig)
    w1, b1 = emb.gate[0].weight, emb.gate[0].bias
    w2, b2 = emb.gate[2].weight, emb.gate[2].bias
    for row, s in enumerate(sig):
        vecs = torch.stack([emb.table.weight[i * emb.num_buckets + int(s[i])] for i in range(emb.num_hashes)])
        alpha = torch.stack([w2 @ torch.nn.functional.silu(w1 @ v + b1) + b2 for v in vecs]).squeeze(-1)
        mixed = (torch.softmax(alpha, 0)[:, None] * vecs).sum(0)
        expected = emb.adapter.weight @ mixed + emb.adapter.bias
        torch.testing.assert_close(got[row], expected, rtol=1e-6, atol=1e-6)


def test_uniform_gate_and_identity_adapter_give_the_mean_of_the_addressed_rows():
    emb = make_embedding(vocab=10, hashes=3, buckets=5, d=4)
    with torch.no_grad():
        # Row r of the shared table is the constant vector r, so the embedding reveals which rows were read.
        emb.table.weight.copy_(torch.arange(15, dtype=torch.float32)[:, None].expand(15, 4))
        emb.gate[2].weight.zero_()
        emb.gate[2].bias.zero_()
        emb.adapter.weight.copy_(torch.eye(4))
        emb.adapter.bias.zero_()
    sig = torch.tensor([[1, 2, 3], [4, 4, 4], [0, 0, 0]])
    # coordinate k reads row k*B + s_k: (1 + 7 + 13)/3 = 7, (4 + 9 + 14)/3 = 9, (0 + 5 + 10)/3 = 5
    got = emb.compose(sig)
    torch.testing.assert_close(got, torch.tensor([[7.0] * 4, [9.0] * 4, [5.0] * 4]))
    torch.testing.assert_close(emb.hash_table(1), emb.table.weight[5:10])


def test_forward_gathers_hash_map_then_composes():
    emb = make_embedding()
    ids = torch.tensor([[1, 2, 3], [19, 0, 5]])
    torch.testing.assert_close(emb(ids), emb.compose(emb.hash_map[ids]))
    assert emb(ids).shape == (2, 3, 8)


def test_parameter_count_is_tables_gate_adapter():
    emb = GatedCompositionalEmbedding(vocab_size=20, num_hashes=3, num_buckets=7, hidden_size=8, gate_bottleneck=4)
    # tables 3*7*8 = 168; gate 8*4 + 4 + 4*1 + 1 = 41; adapter 8*8 + 8 = 72; total 281 (hash_map is a buffer)
    assert sum(p.numel() for p in emb.parameters()) == 281
    assert emb.hash_map.shape == (20, 3) and emb.hash_map.dtype == torch.long
    assert "hash_map" in emb.state_dict()


def test_bad_ids_are_rejected_with_clear_errors():
    emb = make_embedding()
    with pytest.raises(TypeError, match="int64"):
        emb(torch.tensor([1.0]))
    with pytest.raises(ValueError, match=r"\[0, vocab_size=20\)"):
        emb(torch.tensor([20]))
    with pytest.raises(ValueError, match="-100"):
        emb(torch.tensor([-100]))
    with pytest.raises(ValueError, match="H=3"):
        emb.compose(torch.zeros(2, 4, dtype=torch.long))


def test_signature_table_validation():
    good = collision_free_table(6, 2, 5, seed=1)
    assert torch.equal(validate_signature_table(good, 5, 2), good)
    padded = torch.cat([good, torch.zeros(2, 2, dtype=torch.long)])
    assert torch.equal(validate_signature_table(padded, 5), padded)  # all-zero rows are padding

    dup = good.clone()
    dup[4] = dup[1]
    with pytest.raises(ValueError, match=r"token ids \[1, 4\] share one signature"):
        validate_signature_table(dup, 5)
    mixed = good.clone()
    mixed[2, 0] = 0
    with pytest.raises(ValueError, match=r"token ids \[2\].*bucket 0"):
        validate_signature_table(mixed, 5)
    with pytest.raises(ValueError, match=r"num_buckets=4\), found values in \[1, 4\]"):
        validate_signature_table(torch.tensor([[1, 4], [2, 3]]), 4)
    with pytest.raises(TypeError, match="integers"):
        validate_signature_table(good.float(), 5)
    with pytest.raises(ValueError, match="num_hashes=3"):
        validate_signature_table(good, 5, 3)
    with pytest.raises(TypeError, match="SignatureRegistry"):
        validate_signature_table(good.tolist(), 5)


def test_set_signature_table_checks_the_row_count():
    emb = GatedCompositionalEmbedding(10, 2, 5, 4, 2)
    with pytest.raises(ValueError, match="vocab_size is 10"):
        emb.set_signature_table(collision_free_table(9, 2, 5, seed=0))
    table = collision_free_table(10, 2, 5, seed=0)
    emb.set_signature_table(table)
    assert torch.equal(emb.hash_map, table)


@settings(max_examples=30, deadline=None)
@given(vocab=st.integers(1, 40), hashes=st.integers(1, 3), buckets=st.integers(4, 9), seed=st.integers(0, 99),
       data=st.data())
def test_tables_with_a_duplicate_are_always_rejected(vocab, hashes, buckets, seed, data):
    vocab = min(vocab, (buckets - 1) ** hashes)
    table = collision_free_table(vocab, hashes, buckets, seed)
    assert torch.equal(validate_signature_table(table, buckets, hashes), table)
    if vocab >= 2:
        i = data.draw(st.integers(0, vocab - 1))
        j = data.draw(st.integers(0, vocab - 1).filter(lambda x: x != i))
        table[j] = table[i]
        with pytest.raises(ValueError, match="duplicated signature"):
            validate_signature_table(table, buckets, hashes)
