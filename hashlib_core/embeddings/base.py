"""The one protocol every "token -> vector" module of the book follows.

Each paper replaces the ``V x d`` embedding matrix by something computed from a hash of the token: a bucket row
(HashFormers' Emb), a function of the token's bit code (Pool, Add, Proj), a gated mixture of several bucket rows
(MultiHashFormer), and, in later chapters, Bloom digests (Superbloom), rolling n-gram hashes (dynamic embeddings)
and MinHash projections (pNLP-Mixer). They differ in what they read (ids, bits, signatures), so ``forward`` takes
each module's own hashed representation; they agree on what the rest of a model needs from them:

* ``embedding_dim`` -- ``d``, the width of the vectors ``forward`` returns (shape ``(..., d)``);
* ``embedding_parameter_count()`` -- the parameters that build the vector of an ordinary (non-special) token, the
  quantity the papers' "#Emb" columns count (padding rows and codewords that never reach a token are excluded).

Any backbone can then take any of them, and parameter tables are counted the same way for all.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

__all__ = ["TokenEmbedding", "check_token_embedding"]


@runtime_checkable
class TokenEmbedding(Protocol):
    """A module mapping a token's hashed representation to a ``(..., embedding_dim)`` vector."""

    embedding_dim: int

    def forward(self, *inputs: Any, **kwargs: Any) -> torch.Tensor:
        ...

    def embedding_parameter_count(self) -> int:
        """Parameters that build the vector of a non-special token (the papers' "#Emb")."""
        ...


def check_token_embedding(module: Any) -> TokenEmbedding:
    """Return ``module`` if it follows :class:`TokenEmbedding`, else raise ``TypeError`` naming what is missing."""
    missing = [name for name in ("embedding_dim", "forward", "embedding_parameter_count")
               if not hasattr(module, name)]
    if missing:
        raise TypeError(f"{type(module).__name__} is not a TokenEmbedding: it lacks {', '.join(missing)} "
                        f"(see hashlib_core.embeddings.base)")
    return module
