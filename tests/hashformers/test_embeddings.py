"""HashFormers embedding modules (§3.1, §3.4 Eq. 1-3): Emb, Pool, Add, Proj and ProFormer's projection."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr

from hashlib_core.embeddings.hashed import (
    AdditiveEmbedding,
    HashBucketEmbedding,
    LinearBitProjection,
    PearsonProjection,
    PoolEmbedding,
    bits_to_codewords,
)


def random_bits(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 2, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.uint8)


def test_codewords_paper_example():
    # §3.4: k = 4, bits 1010 0100 0001 -> codewords [10, 4, 1]
    bits = torch.tensor([1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1])
    assert bits_to_codewords(bits, 4).tolist() == [10, 4, 1]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**128 - 1))
def test_codewords_match_released_string_slicing(value):
    # released conj collator: int(base2[ind: ind + 10], 2) for ind in range(0, 128, 10), base2 = format(v, '0>128b')
    base2 = format(value, "0>128b")
    bits = torch.tensor([int(c) for c in base2])
    expected = [int(base2[i : i + 10], 2) for i in range(0, 128, 10)]
    assert bits_to_codewords(bits, 10).tolist() == expected
    assert len(expected) == 13 and expected[-1] < 256  # the 13th chunk has 8 bits


def test_bucket_embedding_layout():
    emb = HashBucketEmbedding(num_buckets=10, embedding_dim=4)
    assert emb.weight.shape == (15, 4)  # 5 special rows + N hashed rows
    assert torch.count_nonzero(emb.weight[1]) == 0  # <pad> row
    out = emb(torch.tensor([[0, 7, 14, 1]]))
    assert out.shape == (1, 4, 4) and torch.equal(out[0, 1], emb.weight[7])
    with pytest.raises(TypeError, match="integer"):
        emb(torch.zeros(2, 3))


def test_pool_matches_equation_1():
    torch.manual_seed(0)
    pool = PoolEmbedding(num_bits=12, embedding_dim=6, chunk_bits=5).eval()  # chunks of 5, 5, 2 bits
    assert pool.codebook.weight.shape == (2**5 + 1, 6) and pool.chunk_weights.shape == (3, 6)
    bits = random_bits(2, 3, 12)
    out = pool(bits)
    weights = torch.softmax(pool.chunk_weights, dim=0)  # Eq. 1a: softmax over the ceil(T/k) chunks, per dimension
    for b in range(2):
        for t in range(3):
            codes = bits_to_codewords(bits[b, t], 5) + 1  # released: codeword + 1 (0 = padding)
            expected = (pool.codebook.weight[codes] * weights).sum(0)  # Eq. 1b
            torch.testing.assert_close(out[b, t], expected)


def test_pool_inactive_positions_are_zero_and_padding_row_stays_zero():
    pool = PoolEmbedding(num_bits=128, embedding_dim=8).eval()
    bits = random_bits(2, 4, 128)
    active = torch.tensor([[True, True, False, False], [False, True, True, True]])
    out = pool(bits, active)
    assert torch.count_nonzero(out[~active]) == 0
    assert torch.count_nonzero(out[active].abs().sum(-1)) == int(active.sum())
    out.sum().backward()
    assert torch.count_nonzero(pool.codebook.weight.grad[0]) == 0


def test_pool_codeword_dropout_only_in_training():
    pool = PoolEmbedding(num_bits=20, embedding_dim=16, chunk_bits=10, codeword_dropout=0.5)
    bits = random_bits(64, 20)
    pool.eval()
    assert torch.equal(pool(bits), pool(bits))
    pool.train()
    assert not torch.equal(pool(bits), pool(bits))


def test_add_matches_equation_2():
    torch.manual_seed(1)
    add = AdditiveEmbedding(num_bits=16, embedding_dim=5)
    assert add.codebooks.shape == (16, 2, 5) and add.scale == pytest.approx(4.0)  # gamma = sqrt(T), footnote 3
    bits = random_bits(3, 7, 16, seed=3)
    out = add(bits)
    torch.testing.assert_close(out, add.forward_reference(bits))
    b = bits[1, 2]
    manual = sum(add.codebooks[j, int(b[j])] for j in range(16)) / math.sqrt(16)
    torch.testing.assert_close(out[1, 2], manual)
    active = torch.zeros(3, 7, dtype=torch.bool)
    assert torch.count_nonzero(add(bits, active)) == 0


def test_add_parts_sum_to_the_embedding_and_the_frozen_control_moves_only_word_parts():
    """shared + word part == Eq. 2; with shared_gradient=False the output is the same function, and an Adam step
    (no weight decay) leaves the shared part exactly where it was while the word parts move."""
    torch.manual_seed(2)
    add = AdditiveEmbedding(num_bits=16, embedding_dim=5)
    bits = random_bits(4, 6, 16, seed=4)
    shared, word = add.parts(bits)
    assert shared.shape == (5,) and word.shape == (4, 6, 5)
    torch.testing.assert_close(shared + word, add(bits))
    frozen = AdditiveEmbedding(num_bits=16, embedding_dim=5, shared_gradient=False)
    frozen.load_state_dict(add.state_dict())
    torch.testing.assert_close(frozen(bits), add(bits))
    before_shared, before_word = (t.detach().clone() for t in frozen.parts(bits))
    optimizer = torch.optim.Adam(frozen.parameters(), lr=1e-2)
    frozen(bits).pow(2).sum().backward()
    optimizer.step()
    after_shared, after_word = frozen.parts(bits)
    torch.testing.assert_close(after_shared, before_shared)
    assert not torch.allclose(after_word, before_word)
    optimizer = torch.optim.Adam(add.parameters(), lr=1e-2)   # the paper's Add: the shared part moves too
    add(bits).pow(2).sum().backward()
    optimizer.step()
    assert not torch.allclose(add.parts(bits)[0], before_shared)
    with pytest.raises(TypeError, match="shared_gradient must be a bool"):
        AdditiveEmbedding(16, 5, shared_gradient="no")


def test_add_differences_storage_is_eq2_without_the_shared_part():
    """The differences storage holds T x d numbers, its codebooks are ∓D/2 (shared part zero), it equals Eq. 2
    gathered from those codebooks, and codebooks with the same differences give the same words up to their shared
    part (the vector a model adds to every word absorbs it)."""
    torch.manual_seed(5)
    diff = AdditiveEmbedding(num_bits=16, embedding_dim=5, storage="differences")
    assert diff.embedding_parameter_count() == 16 * 5 and diff.as_codebooks().shape == (16, 2, 5)
    assert AdditiveEmbedding(16, 5).embedding_parameter_count() == 2 * 16 * 5
    bits = random_bits(4, 6, 16, seed=6)
    torch.testing.assert_close(diff(bits), diff.forward_reference(bits))
    shared, word = diff.parts(bits)
    assert torch.count_nonzero(shared) == 0
    torch.testing.assert_close(word, diff(bits))
    books = AdditiveEmbedding(num_bits=16, embedding_dim=5)
    with torch.no_grad():
        books.codebooks[:, 1] = books.codebooks[:, 0] + diff.differences
    torch.testing.assert_close(books(bits), books.parts(bits)[0] + diff(bits))
    assert torch.count_nonzero(diff(bits, torch.zeros(4, 6, dtype=torch.bool))) == 0
    with pytest.raises(ValueError, match="storage must be one of"):
        AdditiveEmbedding(16, 5, storage="factored")


def test_adam_moves_the_codebooks_shared_part_sqrt_t_times_as_far_as_one_vector():
    """One Adam step on a loss of the embeddings plus one vector ``m`` added to every word (the marker): ``m`` and
    the shared part get the same gradient; ``m`` moves by lr per coordinate, the codebooks' shared part by
    T/γ = √T times as much; with the differences storage nothing but ``m`` carries the shared part."""
    torch.manual_seed(7)
    T, d, lr = 64, 8, 1e-3
    bits = random_bits(32, T, seed=8)
    for storage, expected in (("codebooks", math.sqrt(T)), ("differences", 0.0)):
        add = AdditiveEmbedding(num_bits=T, embedding_dim=d, storage=storage)
        marker = torch.nn.Parameter(torch.zeros(d))
        optimizer = torch.optim.Adam([*add.parameters(), marker], lr=lr)
        target = torch.randn(d)
        before = add.parts(bits)[0].detach().clone()
        ((add(bits) + marker - target) ** 2).sum().backward()
        optimizer.step()
        shared_moved = (add.parts(bits)[0].detach() - before).norm()
        assert float(marker.detach().norm()) == pytest.approx(lr * math.sqrt(d), rel=1e-3)
        assert float(shared_moved / marker.detach().norm()) == pytest.approx(expected, rel=1e-3, abs=1e-9)


def test_proj_is_pearson_correlation_unit_by_unit():
    torch.manual_seed(2)
    proj = PearsonProjection(num_bits=128, embedding_dim=12).double()
    bits = random_bits(4, 128, seed=5)
    out = proj(bits)
    weight = proj.weight.detach().numpy()
    for b in range(4):
        for j in range(12):
            r = pearsonr(bits[b].double().numpy(), weight[j]).statistic
            assert out[b, j].item() == pytest.approx(r, abs=1e-12)


def test_proj_range_constant_codes_and_padding():
    proj = PearsonProjection(num_bits=32, embedding_dim=8)
    bits = random_bits(5, 32, seed=9)
    out = proj(bits)
    assert out.abs().max() <= 1.0 + 1e-6
    constant = torch.stack([torch.zeros(32), torch.ones(32)])
    assert torch.count_nonzero(proj(constant)) == 0  # no defined correlation -> zero vector
    assert torch.count_nonzero(proj(bits, torch.zeros(5, dtype=torch.bool))) == 0
    with pytest.raises(ValueError, match="last dimension of 32"):
        proj(torch.zeros(2, 31))
    with pytest.raises(ValueError, match="active"):
        proj(bits, torch.ones(4, dtype=torch.bool))


def test_linear_projection_is_a_bias_free_matmul():
    lin = LinearBitProjection(num_bits=420, embedding_dim=6)
    bits = random_bits(2, 420)
    torch.testing.assert_close(lin(bits), bits.float() @ lin.weight.T)
    assert sum(p.numel() for p in lin.parameters()) == 420 * 6


@pytest.mark.parametrize("module", [PoolEmbedding, AdditiveEmbedding, PearsonProjection])
def test_parameter_counts_follow_section_3_4(module):
    d, t = 8, 128
    m = module(num_bits=t, embedding_dim=d)
    expected = {
        PoolEmbedding: (math.ceil(t / 10) + 2**10 + 1) * d,  # (ceil(T/k) + 2^k) d + the padding codeword
        AdditiveEmbedding: 2 * t * d,
        PearsonProjection: t * d,
    }[module]
    assert sum(p.numel() for p in m.parameters()) == expected


def test_constructor_validation():
    with pytest.raises(ValueError):
        PoolEmbedding(num_bits=0)
    with pytest.raises(ValueError, match="chunk_bits"):
        PoolEmbedding(chunk_bits=30)
    with pytest.raises(TypeError):
        AdditiveEmbedding(num_bits=1.5)
    with pytest.raises(ValueError, match="scale"):
        AdditiveEmbedding(scale=0.0)
    assert np.isfinite(PearsonProjection(num_bits=4, embedding_dim=2)(random_bits(3, 4)).detach().numpy()).all()
