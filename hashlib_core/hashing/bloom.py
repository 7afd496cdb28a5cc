"""Superbloom's hash maps (Anderson et al., ICLR 2020 submission, §3.2): m independent α-to-one maps of opaque ids.

"Each hash map is obtained by applying a random permutation to the vocabulary and map every consecutive α entities
to the same token. This way we guarantee each hash token to have the same number of collisions α." Map ``j`` draws
its own permutation of the ``N`` ids (numpy PCG64 seeded with ``seed + j``) and cuts it into ``T = ceil(N / α)``
consecutive blocks: id ``s`` goes to **local** token ``η_j(s) = position_j(s) // α`` in ``[0, T)``. When ``N`` is
not a multiple of ``α`` the last block, hence the last token of every map, holds the ``N - (T - 1) α`` remaining
ids (our choice; the paper's vocabularies are multiples of α).

The model's vocabulary of hash tokens (**global** ids) is laid out as: the special tokens first, each with ``m``
private tokens (``[MASK_1] ... [MASK_m]``, §3.2: "special tokens [CLS], [MASK], [SEP] are each mapped to m tokens
with no collisions"), then map 1's ``T`` tokens, then map 2's, and so on: ``global = S m + j T + local`` for ``S``
special tokens. :meth:`BloomHashMaps.digest` gives the ``m`` global tokens of ids; the ``N x m`` local table and its
inverse, a ``m x T x α`` table of ids (``-1`` pads the short last token), are what decoding reads.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from hashlib_core._io import atomic_write_bytes

__all__ = ["DEFAULT_SPECIAL_TOKENS", "BloomHashMaps"]

#: The special tokens of §3.2 (plus padding), each with m private hash tokens.
DEFAULT_SPECIAL_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[MASK]")


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return int(value)


class BloomHashMaps:
    """``m`` α-to-one hash maps of ``num_ids`` opaque ids (ids are ``0 .. num_ids - 1``), deterministic from ``seed``.

    Attributes: ``table`` ``(N, m)`` int64 local tokens, ``inverse`` ``(m, T, α)`` int64 ids (``-1`` padding),
    ``counts`` ``(T,)`` ids per token (the same for every map).
    """

    def __init__(self, num_ids: int, alpha: int, num_hashes: int = 2, seed: int = 0,
                 special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS) -> None:
        self.num_ids = _positive_int("num_ids (the number of ids to hash)", num_ids)
        self.alpha = _positive_int("alpha (ids per hash token)", alpha)
        self.num_hashes = _positive_int("num_hashes (m, the number of hash maps)", num_hashes)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        self.seed = int(seed)
        self.special_tokens = tuple(special_tokens)
        if len(set(self.special_tokens)) != len(self.special_tokens):
            raise ValueError(f"special tokens must be distinct, got {self.special_tokens}")
        if self.alpha > self.num_ids:
            raise ValueError(f"alpha = {self.alpha} exceeds the {self.num_ids} ids: every id would share one token; "
                             f"use alpha <= num_ids")
        self.tokens_per_map = -(-self.num_ids // self.alpha)
        table = np.empty((self.num_ids, self.num_hashes), dtype=np.int64)
        inverse = np.full((self.num_hashes, self.tokens_per_map * self.alpha), -1, dtype=np.int64)
        for j in range(self.num_hashes):
            order = np.random.default_rng(self.seed + j).permutation(self.num_ids)
            table[order, j] = np.arange(self.num_ids) // self.alpha
            inverse[j, : self.num_ids] = order
        self.table = torch.from_numpy(table)
        self.inverse = torch.from_numpy(inverse.reshape(self.num_hashes, self.tokens_per_map, self.alpha))
        counts = np.full(self.tokens_per_map, self.alpha, dtype=np.int64)
        counts[-1] = self.num_ids - (self.tokens_per_map - 1) * self.alpha
        self.counts = torch.from_numpy(counts)

    # ------------------------------------------------------------------ vocabulary layout
    @property
    def num_special(self) -> int:
        return len(self.special_tokens)

    @property
    def vocab_size(self) -> int:
        """Hash tokens in all: ``m`` per special token plus ``m T`` for the ids."""
        return self.num_hashes * (self.num_special + self.tokens_per_map)

    def special_ids(self, token: str) -> list[int]:
        """The ``m`` private global tokens of a special token (``[MASK]`` -> ``[MASK_1] ... [MASK_m]``)."""
        if token not in self.special_tokens:
            raise KeyError(f"{token!r} is not a special token; known: {self.special_tokens}")
        i = self.special_tokens.index(token)
        return [i * self.num_hashes + j for j in range(self.num_hashes)]

    def offset(self, j: int) -> int:
        """Global id of map ``j``'s local token 0."""
        return self.num_special * self.num_hashes + j * self.tokens_per_map

    # ------------------------------------------------------------------ hashing and inverting
    def _check_ids(self, ids: torch.Tensor) -> torch.Tensor:
        ids = torch.as_tensor(ids)
        if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
            raise TypeError(f"ids must be integers, got dtype {ids.dtype}; use torch.as_tensor(ids).long()")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.num_ids):
            raise ValueError(f"ids must lie in [0, {self.num_ids}) (the ids these maps were built for), got "
                             f"[{int(ids.min())}, {int(ids.max())}]; map unknown items to an id first")
        return ids.long()

    def local(self, ids: torch.Tensor) -> torch.Tensor:
        """``(..., m)`` local tokens ``η_j(s)`` in ``[0, T)``."""
        return self.table.to(torch.as_tensor(ids).device)[self._check_ids(ids)]

    def digest(self, ids: torch.Tensor) -> torch.Tensor:
        """``(..., m)`` global hash tokens of ``ids`` (the model's inputs and targets)."""
        offsets = torch.tensor([self.offset(j) for j in range(self.num_hashes)], dtype=torch.long)
        return self.local(ids) + offsets.to(torch.as_tensor(ids).device)

    def ids_of(self, j: int, local_token: int) -> torch.Tensor:
        """The ids sharing local token ``local_token`` of map ``j`` (``η_j^{-1}``)."""
        if not 0 <= j < self.num_hashes or not 0 <= local_token < self.tokens_per_map:
            raise ValueError(f"map {j} / token {local_token} out of range ({self.num_hashes} maps, "
                             f"{self.tokens_per_map} tokens each)")
        row = self.inverse[j, local_token]
        return row[row >= 0]

    def inverse_tokens(self, device: torch.device | str | None = None) -> torch.Tensor:
        """``(m, T, α, m)``: the local tokens, in every map, of the ids of ``inverse`` (padding slots read id 0's).

        Decoding reads the ``α`` ids of a likely token together with all their tokens from one contiguous block
        instead of looking each id up in ``table`` (random reads): ``N m²`` integers, built once and kept per
        device."""
        cache = self.__dict__.setdefault("_inverse_tokens", {})
        key = str(torch.device(device) if device is not None else self.table.device)
        if key not in cache:
            block = self.table[self.inverse.clamp(min=0).reshape(-1)]
            cache[key] = block.reshape(self.num_hashes, self.tokens_per_map, self.alpha, self.num_hashes).to(key)
        return cache[key]

    # ------------------------------------------------------------------ persistence
    def config(self) -> dict:
        return {"num_ids": self.num_ids, "alpha": self.alpha, "num_hashes": self.num_hashes, "seed": self.seed,
                "special_tokens": list(self.special_tokens)}

    def save(self, path: str | Path) -> None:
        """Write the maps' configuration and the ``N x m`` table (``.npz``) atomically; :meth:`load` checks the
        table against the one rebuilt from the configuration."""
        import io

        buffer = io.BytesIO()
        np.savez_compressed(buffer, table=self.table.numpy(), config=np.frombuffer(
            json.dumps(self.config()).encode("utf-8"), dtype=np.uint8))
        atomic_write_bytes(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> "BloomHashMaps":
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no saved hash maps at {path}; write them with BloomHashMaps.save")
        try:
            with np.load(path) as data:
                config = json.loads(bytes(data["config"]).decode("utf-8"))
                table = data["table"]
        except (OSError, ValueError, KeyError) as err:
            raise ValueError(f"{path} is not a saved BloomHashMaps file ({err}); save the maps again") from err
        maps = cls(**config)
        if not np.array_equal(maps.table.numpy(), table):
            raise ValueError(f"{path}: the stored table differs from the one its configuration builds (a different "
                             f"numpy permutation?); rebuild the maps from the configuration and save them again")
        return maps

    def __repr__(self) -> str:
        return (f"BloomHashMaps(num_ids={self.num_ids}, alpha={self.alpha}, num_hashes={self.num_hashes}, "
                f"seed={self.seed}, tokens_per_map={self.tokens_per_map}, vocab_size={self.vocab_size})")
