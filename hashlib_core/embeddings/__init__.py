"""Token-embedding modules built on hashing, all following one protocol (:mod:`hashlib_core.embeddings.base`).

- :mod:`hashlib_core.embeddings.base` -- :class:`TokenEmbedding`: ``embedding_dim`` and ``embedding_parameter_count()``.
- :mod:`hashlib_core.embeddings.hashed` -- Emb / Pool / Add / Proj (HashFormers, Eq. 1-3) and ProFormer's projection.
- :mod:`hashlib_core.embeddings.multihash` -- gated compositional embedding (MultiHashFormer, section 3.1).
"""
from hashlib_core.embeddings.base import TokenEmbedding, check_token_embedding

__all__ = ["TokenEmbedding", "check_token_embedding"]
