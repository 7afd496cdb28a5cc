"""The module every catalogue family is wrapped in: token ids in, ``(..., d)`` vectors out, with the per-id codes
a family hashes once at build time (:func:`hashlib_core.embeddings.catalogue.build` makes it)."""
from __future__ import annotations

import torch
from torch import nn

from hashlib_core.embeddings.compressed import ImportanceHashEmbedding, RowCombinationEmbedding

__all__ = ["CatalogueEmbedding"]


class CatalogueEmbedding(nn.Module):
    """Token ids -> ``(..., d)``: ``module(codes[ids])`` where the family hashes strings, ``module(ids)`` where it
    hashes ids. ``embedding_parameter_count()`` is the module's; :meth:`lookup_bytes` the codes buffer's size (what
    the hash needs at run time besides the parameters)."""

    def __init__(self, family: str, module: nn.Module, codes: torch.Tensor | None, vocab_size: int) -> None:
        super().__init__()
        self.family, self.module, self.vocab_size = family, module, vocab_size
        self.embedding_dim = module.embedding_dim
        if codes is not None:
            if codes.shape[0] != vocab_size:
                raise ValueError(f"{family}: {codes.shape[0]} rows of codes for {vocab_size} token ids")
            self.register_buffer("codes", codes)
        else:
            self.codes = None

    def embedding_parameter_count(self) -> int:
        return self.module.embedding_parameter_count()

    def lookup_bytes(self) -> int:
        """Bytes the hash keeps besides the parameters: every buffer (the per-id codes, a family's own signature
        table or hash multipliers) and a computed-vector cache (the dynamic n-gram family's)."""
        held = [b for b in self.buffers()]
        cache = getattr(getattr(self.module, "inner", None), "cache", None)
        if isinstance(cache, torch.Tensor):
            held.append(cache)
        return sum(t.numel() * t.element_size() for t in held)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if not isinstance(input_ids, torch.Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
            got = input_ids.dtype if isinstance(input_ids, torch.Tensor) else type(input_ids).__name__
            raise TypeError(f"{self.family}: input_ids must be an int64 tensor of token ids, got {got}; convert "
                            f"with torch.as_tensor(ids).long()")
        if input_ids.numel():
            low, high = (int(v) for v in torch.aminmax(input_ids))
            if low < 0 or high >= self.vocab_size:
                raise ValueError(f"{self.family}: token ids must lie in [0, {self.vocab_size}) (the vocabulary it "
                                 f"was built from), got values in [{low}, {high}]")
        if self.codes is None:
            return self.module(input_ids.long())
        codes = self.codes[input_ids.long()]
        # row ids are stored narrow (int32) where they are many per token; the modules read int64
        return self.module(codes.long() if isinstance(self.module, _ROW_MODULES) else codes)

    def extra_repr(self) -> str:
        return f"family={self.family!r}, vocab_size={self.vocab_size}"


#: modules that read row ids (a codes buffer stored as int32 is widened for them)
_ROW_MODULES = (RowCombinationEmbedding, ImportanceHashEmbedding)
