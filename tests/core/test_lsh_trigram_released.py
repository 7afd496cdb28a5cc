"""MultiHashFormer's trigram LSH coordinates against the released code's own procedure.

``released_hash_map`` is ``Qwen3Model.initialize_hash_map`` (with ``_lsh_binarize`` and ``_get_trigrams``) of
HUIYINXUE/MHF, ``hashformer/qwen3/qwen3_hashformer/modeling_qwen3.py``, transcribed statement for statement, the
tokenizer loop replaced by a list of distinct token strings (so the branch for a token met twice is dropped) and the
padding row left out (this library's tables have none).
It keeps the released code's bookkeeping, one remembered token per signature prefix, so it can repeat signatures.
"""
from __future__ import annotations

from collections import Counter

import mmh3
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hashlib_core.hashing.lsh_trigram import TrigramLSHHasher, mixed_signature_table


def _lsh_binarize(count_dict, lsh_seed, proj_mat):
    tri_grams = list(count_dict.keys())
    freq = torch.tensor([list(count_dict.values())], dtype=proj_mat.dtype)
    tri_grams_id = [mmh3.hash128(tri_gram, seed=lsh_seed) % 16000 for tri_gram in tri_grams]
    out = freq @ proj_mat[tri_grams_id]
    out[out >= 0] = 1.0 * (512 ** (-0.5))
    out[out < 0] = -1.0 * (512 ** (-0.5))
    return out


def _get_trigrams(tok):
    if len(tok) < 3:
        return Counter([tok])
    return Counter([tok[i:i + 3] for i in range(len(tok) - 2)])


def released_hash_map(tokens: list[str], num_lsh: int, num_hashes: int, num_buckets: int) -> tuple[np.ndarray,
                                                                                                    list[int]]:
    """The released code's ``V x H`` hash map of ``tokens``, and for each row how many earlier rows share its
    signature prefix (its first ``H - 1`` coordinates; all ``H`` when every coordinate is LSH)."""
    hash_map = np.zeros((len(tokens), num_hashes), dtype=np.int64)
    external_dict: dict = {}
    seen: Counter = Counter()
    earlier = []
    lsh_proj_mat = None
    for i, tok in enumerate(tokens):
        hash_id_prefix = ()
        if num_lsh > 0:
            if i == 0:
                lsh_proj_mat = {}
                gen_1 = torch.Generator()
                gen_1.manual_seed(3407)
                lsh_proj_mat["1st"] = torch.randn((16000, num_lsh, 512), generator=gen_1)
                gen_2 = torch.Generator()
                gen_2.manual_seed(3408)
                lsh_proj_mat_2 = torch.randn((512 * num_lsh, num_lsh, num_buckets - 1), generator=gen_2)
                lsh_proj_mat["2nd"] = F.normalize(lsh_proj_mat_2, dim=-1)
            count_dict = _get_trigrams(tok)
            first_stage_lsh_output = ()
            for j in range(num_lsh):
                first_stage_lsh_output = first_stage_lsh_output + (
                    _lsh_binarize(count_dict, j, lsh_proj_mat["1st"][:, j, :]),)
            second_stage_lsh_input = torch.cat(first_stage_lsh_output, dim=-1)
            for j in range(num_lsh):
                idx = (second_stage_lsh_input @ lsh_proj_mat["2nd"][:, j, :]).argmax(dim=-1).item() + 1
                hash_id_prefix = hash_id_prefix + (idx,)
        for j in range(num_lsh, num_hashes - 1):
            hash_id_prefix = hash_id_prefix + (mmh3.hash128(tok, seed=j) % (num_buckets - 1) + 1,)
        earlier.append(seen[hash_id_prefix])
        seen[hash_id_prefix] += 1
        hash_seed_offset = num_hashes - 1
        if num_hashes != num_lsh:
            last_hash_id = mmh3.hash128(tok, seed=hash_seed_offset) % (num_buckets - 1) + 1
            if hash_id_prefix in external_dict:
                rehash_additional_offset = 0
                while last_hash_id in external_dict[hash_id_prefix].values():
                    rehash_additional_offset = rehash_additional_offset + 1
                    last_hash_id = mmh3.hash128(tok, seed=hash_seed_offset + rehash_additional_offset
                                                ) % (num_buckets - 1) + 1
            external_dict[hash_id_prefix] = {tok: last_hash_id}
            hash_id_prefix = hash_id_prefix + (last_hash_id,)
        hash_map[i] = hash_id_prefix
    return hash_map, earlier


@pytest.fixture(scope="module")
def mbert_sample(mirror) -> list[str]:
    """1,000 pieces of mBERT's 119,547-piece vocabulary (every 119th: words, ``##`` continuations, CJK, short
    pieces), the vocabulary MultiHashFormer's Table 4 reports on."""
    from hashlib_core.data import load_wordpiece_vocab

    vocab = load_wordpiece_vocab("bert-base-multilingual-cased")
    return vocab[::119][:1000]


@pytest.mark.parametrize("num_lsh", [1, 3])
def test_lsh_coordinates_equal_the_released_code_row_for_row(mbert_sample, num_lsh):
    released, _ = released_hash_map(mbert_sample, num_lsh, 4, 4096)
    ours = TrigramLSHHasher(num_lsh, 4096).hash_batch(mbert_sample)
    assert np.array_equal(ours, released[:, :num_lsh])


@pytest.mark.parametrize("num_lsh", [0, 1, 3])
def test_mixed_tables_equal_the_released_code_where_its_bookkeeping_is_exact(mbert_sample, num_lsh):
    """Every row whose prefix no two earlier rows share (the released code remembers one token per prefix, so
    from the third on it can repeat a signature) is the released code's row, and ours never repeats one."""
    released, earlier = released_hash_map(mbert_sample, num_lsh, 4, 4096)
    ours = mixed_signature_table(mbert_sample, num_lsh, 4, 4096).numpy()
    exact = np.array(earlier) <= 1
    assert exact.mean() > 0.95
    assert np.array_equal(ours[exact], released[exact])
    assert len(np.unique(ours, axis=0)) == len(mbert_sample)


def test_the_coordinates_of_a_hasher_depend_on_how_many_there_are():
    """Both random tensors are shaped by ``L`` (the released code's), so coordinate 0 of ``L = 1`` and of
    ``L = 3`` differ; a hand-made token list keeps this test off the data mirror."""
    tokens = [f"{stem}{end}" for stem in ("play", "run", "inter", "na", "x") for end in ("", "ing", "ed", "s")]
    one, three = TrigramLSHHasher(1, 4096).hash_batch(tokens), TrigramLSHHasher(3, 4096).hash_batch(tokens)
    released, _ = released_hash_map(tokens, 3, 3, 4096)
    assert np.array_equal(three, released)
    assert (one[:, 0] != three[:, 0]).mean() > 0.9
