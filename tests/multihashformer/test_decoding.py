"""MultiHashFormer Hash Decoder: cascade (section 3.3), P_train loss and P_inf scoring/sampling/generation (3.4)."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from hashlib_core.decoding.multihash import (
    CPU_CHUNK_ELEMENTS,
    CPU_ROW_TILE,
    MIN_AUTO_CHUNK,
    auto_chunk_size,
    row_tile_size,
    hash_log_probs,
    iter_vocab_scores,
    multihash_loss,
    sample_vocab,
    score_vocab,
    scoring_layout,
    vocab_log_probs,
)
from hashlib_core.papers.multihashformer.decoding import CascadedHashDecoder, generate, valid_vocab_nll
from hashlib_core.papers.multihashformer.modeling import MultiHashFormerConfig, MultiHashFormerForCausalLM

V, H, B, D = 60, 3, 11, 32
NUM_PADDED = 6  # the last ids keep an all-zero (padding) signature


def collision_free_table(vocab_size: int, num_hashes: int, num_buckets: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    base = num_buckets - 1
    codes = torch.randperm(base**num_hashes, generator=gen)[:vocab_size]
    return torch.stack([(codes // base**k) % base + 1 for k in range(num_hashes)], dim=1)


def padded_table(seed: int = 0) -> torch.Tensor:
    table = collision_free_table(V, H, B, seed)
    table[V - NUM_PADDED:] = 0
    return table


def naive_train_scores(log_probs: torch.Tensor, hash_map: torch.Tensor) -> torch.Tensor:
    """Reference: (N, V) matrix sum_k log_probs[n, k, hash_map[v, k]], -inf on all-zero rows."""
    full = sum(log_probs[:, k, hash_map[:, k]] for k in range(hash_map.shape[1]))
    return full.masked_fill(hash_map.eq(0).all(-1), -math.inf)


def random_log_probs(n: int, hashes: int, buckets: int, seed: int, dtype=torch.float64) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.log_softmax(3 * torch.randn(n, hashes, buckets, generator=gen, dtype=dtype), dim=-1)


@pytest.fixture(scope="module")
def model() -> MultiHashFormerForCausalLM:
    torch.manual_seed(0)
    config = MultiHashFormerConfig(
        vocab_size=V, num_hashes=H, num_buckets=B, gate_bottleneck=8, mixer_bottleneck=8, hidden_size=D,
        intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    )
    m = MultiHashFormerForCausalLM(config)
    m.set_signature_table(padded_table())
    return m.eval()


# ---------------------------------------------------------------------------------------------- cascade and loss

def test_cascade_matches_the_section_3_3_recursion():
    torch.manual_seed(1)
    dec = CascadedHashDecoder(num_hashes=3, num_buckets=5, hidden_size=6, mixer_bottleneck=4)
    table = torch.randn(15, 6)
    h = torch.randn(2, 6)
    got = dec(h, table)
    c = h.clone()
    for k in range(3):
        e_k = table[5 * k : 5 * k + 5]
        o = c @ e_k.T                                            # o^(k) = W_o^(k)T c^(k), W_o^(k)T = E^(k)
        torch.testing.assert_close(got[:, k], o, rtol=1e-5, atol=1e-6)
        if k < 2:
            soft = torch.softmax(o, -1) @ e_k                    # e^(k) = E^(k)T p^(k)
            down, up = dec.mixers[k][0], dec.mixers[k][2]
            c = c + up(torch.nn.functional.silu(down(torch.cat([c, soft], -1))))
    assert got.shape == (2, 3, 5)


def test_single_hash_decoder_is_a_tied_softmax_and_has_no_parameters():
    dec = CascadedHashDecoder(num_hashes=1, num_buckets=7, hidden_size=4)
    table, h = torch.randn(7, 4), torch.randn(3, 4)
    torch.testing.assert_close(dec(h, table)[:, 0], h @ table.T)
    assert sum(p.numel() for p in dec.parameters()) == 0
    with pytest.raises(ValueError, match=r"\(H\*B, d\) = \(7, 4\)"):
        dec(h, torch.randn(8, 4))


def test_loss_is_the_sum_of_per_hash_cross_entropies_over_kept_tokens():
    gen = torch.Generator().manual_seed(2)
    table = padded_table()
    logits = torch.randn(2, 5, H, B, generator=gen)
    labels = torch.randint(0, V - NUM_PADDED, (2, 5), generator=gen)
    labels[0, 1] = labels[1, 4] = -100
    got = multihash_loss(logits, labels, table)
    keep = labels.ne(-100)
    sig = table[labels[keep]]
    naive = sum(nn.functional.cross_entropy(logits[keep][:, k], sig[:, k]) for k in range(H))
    torch.testing.assert_close(got, naive)
    # equivalently -mean log P_train(label)
    lp = hash_log_probs(logits[keep])
    train = lp.gather(2, sig[..., None]).squeeze(-1).sum(-1)
    torch.testing.assert_close(got, -train.mean())


def test_loss_rejects_unregistered_labels():
    table = padded_table()
    logits = torch.zeros(1, 2, H, B)
    with pytest.raises(ValueError, match=f"labels \\[{V - 1}\\] have no registered signature"):
        multihash_loss(logits, torch.tensor([[0, V - 1]]), table)
    with pytest.raises(ValueError, match="shift labels"):
        multihash_loss(logits, torch.tensor([[0, 1, 2]]), table)


def test_model_loss_shifts_labels(model):
    ids = torch.randint(0, V - NUM_PADDED, (2, 7), generator=torch.Generator().manual_seed(3))
    out = model(ids, labels=ids)
    expected = multihash_loss(out.hash_logits[:, :-1], ids[:, 1:], model.hash_map)
    torch.testing.assert_close(out.loss, expected)
    assert out.hash_logits.shape == (2, 7, H, B)


# -------------------------------------------------------------------------------------------- P_inf, chunking

def test_p_inf_sums_to_one_over_the_valid_vocabulary_in_float64():
    table = padded_table()
    lp = random_log_probs(5, H, B, seed=4)
    probs = vocab_log_probs(lp, table, chunk_size=7).exp()
    assert probs.dtype == torch.float64
    torch.testing.assert_close(probs.sum(-1), torch.ones(5, dtype=torch.float64), rtol=0, atol=1e-12)
    assert torch.all(probs[:, V - NUM_PADDED:] == 0)
    # the training distribution leaks mass to unassigned signatures, so the normaliser is below 0
    assert torch.all(score_vocab(lp, table).log_normalizer < 0)


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 16, V - 1, V, V + 5])
def test_chunked_scores_equal_the_naive_reference(chunk_size):
    table = padded_table(seed=5)
    lp = random_log_probs(4, H, B, seed=6)
    naive = naive_train_scores(lp, table)
    streamed = torch.cat([s for _, s in iter_vocab_scores(lp, table, chunk_size)], dim=1)
    assert torch.equal(streamed, naive)

    targets = torch.tensor([0, 17, 3, V - NUM_PADDED - 1])
    scores = score_vocab(lp, table, targets=targets, top_k=5, chunk_size=chunk_size)
    naive_norm = torch.logsumexp(naive, -1)
    naive_inf = naive - naive_norm[:, None]
    torch.testing.assert_close(scores.log_normalizer, naive_norm, rtol=0, atol=1e-12)
    torch.testing.assert_close(scores.target_log_probs, naive_inf.gather(1, targets[:, None])[:, 0],
                               rtol=0, atol=1e-12)
    top_vals, top_ids = naive_inf.topk(5, dim=1)
    torch.testing.assert_close(scores.top_log_probs, top_vals, rtol=0, atol=1e-12)
    assert torch.equal(scores.top_ids, top_ids)
    torch.testing.assert_close(vocab_log_probs(lp, table, chunk_size=chunk_size), naive_inf, rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(vocab=st.integers(2, 50), hashes=st.integers(1, 4), buckets=st.integers(3, 9), n=st.integers(1, 4),
       chunk=st.integers(1, 60), top_k=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_streamed_statistics_match_the_naive_reference(vocab, hashes, buckets, n, chunk, top_k, seed):
    vocab = min(vocab, (buckets - 1) ** hashes)
    table = collision_free_table(vocab, hashes, buckets, seed)
    table[::3] = 0  # every third id is padding
    if not table.ne(0).any():
        return
    lp = random_log_probs(n, hashes, buckets, seed)
    naive = naive_train_scores(lp, table)
    norm = torch.logsumexp(naive, -1)
    scores = score_vocab(lp, table, top_k=top_k, chunk_size=chunk)
    torch.testing.assert_close(scores.log_normalizer, norm, rtol=0, atol=1e-12)
    valid = int(table.ne(0).any(-1).sum())
    k = min(top_k, vocab, valid)
    ref_vals, ref_ids = (naive - norm[:, None]).topk(k, dim=1)
    torch.testing.assert_close(scores.top_log_probs[:, :k], ref_vals, rtol=0, atol=1e-12)
    assert torch.equal(scores.top_ids[:, :k], ref_ids)
    assert table[scores.top_ids[:, :k]].ne(0).any(-1).all()


def test_leading_dimensions_are_kept_and_bad_targets_rejected():
    table = padded_table()
    lp = random_log_probs(6, H, B, seed=7).reshape(2, 3, H, B)
    scores = score_vocab(lp, table, targets=torch.zeros(2, 3, dtype=torch.long), top_k=2)
    assert scores.log_normalizer.shape == (2, 3) and scores.top_ids.shape == (2, 3, 2)
    with pytest.raises(ValueError, match="probability 0"):
        score_vocab(lp, table, targets=torch.full((2, 3), V - 1))
    with pytest.raises(ValueError, match="no registered signature"):
        score_vocab(lp, torch.zeros(V, H, dtype=torch.long))
    with pytest.raises(ValueError, match="chunk_size"):
        score_vocab(lp, table, chunk_size=0)


def test_auto_chunk_size_bounds_the_scores_held_at_once():
    assert auto_chunk_size(2048, 32768) == CPU_CHUNK_ELEMENTS // 2048          # 512 ids: about 4 MiB of scores
    assert auto_chunk_size(row_tile_size(2048), 32768) == 32768               # a CPU tile of 16 rows: whole V
    assert row_tile_size(2048) == CPU_ROW_TILE and row_tile_size(3) == 3 and row_tile_size(2048, "cuda") == 2048
    assert auto_chunk_size(1, 32768) == 32768                                 # one position: the whole vocabulary
    assert auto_chunk_size(10**6, 32768) == MIN_AUTO_CHUNK                    # never below the floor
    assert auto_chunk_size(10**6, 100) == 100                                 # nor above the vocabulary
    assert auto_chunk_size(2048, 32768, "cuda") > auto_chunk_size(2048, 32768, "cpu")
    with pytest.raises(ValueError, match="vocab_size"):
        auto_chunk_size(4, 0)
    # the layout score_vocab uses: CPU tiles of CPU_ROW_TILE rows, or one tile of all rows for a fixed chunk size
    assert scoring_layout(2048, 32768) == (CPU_ROW_TILE, 32768)
    assert scoring_layout(2048, 32768, 512) == (2048, 512)
    assert scoring_layout(2048, 32768, device="cuda") == (2048, auto_chunk_size(2048, 32768, "cuda"))


def test_default_chunking_equals_an_explicit_one():
    table = padded_table()
    lp = random_log_probs(5, H, B, seed=3)
    targets = torch.zeros(5, dtype=torch.long)
    auto = score_vocab(lp, table, targets=targets, top_k=4)
    fixed = score_vocab(lp, table, targets=targets, top_k=4, chunk_size=7)
    torch.testing.assert_close(auto.log_normalizer, fixed.log_normalizer, rtol=0, atol=1e-12)
    torch.testing.assert_close(auto.target_log_probs, fixed.target_log_probs, rtol=0, atol=1e-12)
    assert torch.equal(auto.top_ids, fixed.top_ids)


# ----------------------------------------------------------------------------------------------------- sampling

def favour_padding_log_probs(n: int, seed: int) -> torch.Tensor:
    """Per-hash distributions that put almost all mass on bucket 0, the bucket of every padding signature."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, H, B, generator=gen)
    logits[..., 0] += 30.0
    return torch.log_softmax(logits, -1)


def test_sampling_and_argmax_never_pick_padding_even_when_bucket_0_dominates():
    table = padded_table()
    lp = favour_padding_log_probs(64, seed=8)
    # Without the mask (the released code keeps padding rows in the softmax) padding would win every time.
    unmasked = sum(lp[:, k, table[:, k]] for k in range(H))
    assert unmasked.argmax(-1).min() >= V - NUM_PADDED
    gen = torch.Generator().manual_seed(9)
    for top_k in (0, 1, 4, V):
        ids = sample_vocab(lp, table, top_k=top_k, temperature=2.0, generator=gen, chunk_size=7)
        assert ids.max() < V - NUM_PADDED
    assert score_vocab(lp, table, top_k=1).top_ids.max() < V - NUM_PADDED


def test_sampling_frequencies_follow_p_inf():
    table = collision_free_table(6, 2, 4, seed=10)
    table[4] = 0
    lp = random_log_probs(1, 2, 4, seed=11, dtype=torch.float32)
    p_inf = vocab_log_probs(lp, table)[0].exp()
    draws = sample_vocab(lp.expand(20_000, -1, -1), table, generator=torch.Generator().manual_seed(12),
                         chunk_size=4)
    freq = torch.bincount(draws, minlength=6).float() / draws.numel()
    assert freq[4] == 0
    assert torch.allclose(freq, p_inf, atol=0.015), (freq, p_inf)
    # temperature T samples from softmax(log P_inf / T)
    cold = torch.softmax(torch.log(p_inf) / 0.5, -1)
    draws = sample_vocab(lp.expand(20_000, -1, -1), table, temperature=0.5,
                         generator=torch.Generator().manual_seed(13))
    freq = torch.bincount(draws, minlength=6).float() / draws.numel()
    assert torch.allclose(freq, cold, atol=0.015), (freq, cold)
    # top-k keeps only the k most likely ids
    top2 = set(p_inf.topk(2).indices.tolist())
    draws = sample_vocab(lp.expand(2_000, -1, -1), table, top_k=2, generator=torch.Generator().manual_seed(14))
    assert set(draws.tolist()) == top2


def test_sampling_is_reproducible_with_a_generator_and_validates_arguments():
    table = padded_table()
    lp = random_log_probs(8, H, B, seed=15)
    a = sample_vocab(lp, table, generator=torch.Generator().manual_seed(16))
    b = sample_vocab(lp, table, generator=torch.Generator().manual_seed(16))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="greedy"):
        sample_vocab(lp, table, temperature=0)
    with pytest.raises(ValueError, match="top_k"):
        sample_vocab(lp, table, top_k=-1)


# --------------------------------------------------------------------------------------------------- generation

def test_greedy_generation_with_cache_equals_recomputing_the_prefix(model):
    prompt = torch.tensor([[1, 2, 3], [40, 41, 42]])
    out = generate(model, prompt, 5, chunk_size=7)
    seq = prompt
    with torch.no_grad():
        for _ in range(5):
            lp = hash_log_probs(model(seq).hash_logits[:, -1])
            seq = torch.cat([seq, vocab_log_probs(lp, model.hash_map).argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, seq)


class FavourPadding(nn.Module):
    """A stand-in decoder whose bucket logits put bucket 0 (padding) far ahead of every other bucket."""

    def forward(self, hidden: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        logits = hidden[..., None, :B].expand(*hidden.shape[:-1], H, B).clone()
        logits[..., 0] += 50.0
        return logits


def test_generation_never_emits_an_unregistered_id(model):
    original = model.hash_decoder
    model.hash_decoder = FavourPadding()
    try:
        prompt = torch.tensor([[5, 6], [7, 8], [9, 10]])
        gen = torch.Generator().manual_seed(0)
        outputs = [
            generate(model, prompt, 8),
            generate(model, prompt, 8, do_sample=True, generator=gen, chunk_size=5),
            generate(model, prompt, 8, do_sample=True, top_k=3, temperature=3.0, generator=gen),
        ]
    finally:
        model.hash_decoder = original
    for out in outputs:
        new = out[:, 2:]
        assert new.shape == (3, 8)
        assert model.hash_map[new].ne(0).any(-1).all(), new


def test_eos_is_repeated_once_emitted(model):
    prompt = torch.tensor([[1, 2, 3]])
    first = int(generate(model, prompt, 1)[0, -1])
    out = generate(model, prompt, 5, eos_token_id=first)
    assert out[0, 3:].tolist() == [first] * 5
    with pytest.raises(ValueError, match="never be generated"):
        generate(model, prompt, 2, eos_token_id=V - 1)


def test_valid_vocab_nll_matches_a_naive_computation(model):
    gen = torch.Generator().manual_seed(17)
    ids = torch.randint(0, V - NUM_PADDED, (2, 9), generator=gen)
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0  # right padding
    got = valid_vocab_nll(model, ids, mask, chunk_size=5, token_chunk_size=3)
    with torch.no_grad():
        total, count = 0.0, 0
        for row in range(2):
            length = int(mask[row].sum())
            seq = ids[row : row + 1, :length]
            lp = hash_log_probs(model(seq).hash_logits[0, :-1])
            full = vocab_log_probs(lp, model.hash_map)
            total -= float(full.gather(1, seq[0, 1:, None]).sum())
            count += length - 1
    assert got.num_tokens == count == 13
    assert math.isclose(got.total_nll, total, rel_tol=1e-5)
    assert math.isclose(got.perplexity, math.exp(total / count), rel_tol=1e-5)


def test_left_padded_batch_generates_what_each_prompt_generates_alone(model):
    prompts = [[5, 6, 7, 8, 9], [40, 41], [12, 13, 14]]
    width, pad = max(map(len, prompts)), 0
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    batched = generate(model, ids, 6, attention_mask=mask)
    assert batched.shape == (3, width + 6)
    assert torch.equal(batched[:, :width], ids)                               # the padding stays in front
    for row, prompt in enumerate(prompts):
        alone = generate(model, torch.tensor([prompt]), 6)
        assert torch.equal(batched[row, width:], alone[0, len(prompt):]), row
    # an all-ones mask is the same as no mask
    assert torch.equal(generate(model, ids, 3, attention_mask=torch.ones_like(ids)), generate(model, ids, 3))


@pytest.mark.parametrize("mask, message", [
    ([[1, 1, 0]], "left-padded"),
    ([[0, 1, 0, 1]], "shape"),
    ([[1, 0, 1]], "between tokens"),
    ([[0, 2, 1]], "only 0"),
])
def test_generation_rejects_masks_that_are_not_left_padding(model, mask, message):
    with pytest.raises(ValueError, match=message):
        generate(model, torch.tensor([[3, 4, 5]]), 2, attention_mask=torch.tensor(mask))
