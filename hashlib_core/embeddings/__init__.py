"""Token-embedding modules built on hashing, all following one protocol (:mod:`hashlib_core.embeddings.base`).

- :mod:`hashlib_core.embeddings.base` -- :class:`TokenEmbedding`: ``embedding_dim`` and ``embedding_parameter_count()``.
- :mod:`hashlib_core.embeddings.hashed` -- Emb / Pool / Add / Proj (HashFormers, Eq. 1-3) and ProFormer's projection.
- :mod:`hashlib_core.embeddings.multihash` -- gated compositional embedding (MultiHashFormer, section 3.1).
- :mod:`hashlib_core.embeddings.compressed` -- the other compression families: rows combined (hashing trick, Bloom,
  Superbloom's input side, T-FREE), hash embeddings with importance weights, quotient-remainder, ROBE, DHE, and a
  fixed-feature bottleneck (pNLP-Mixer's).
- :mod:`hashlib_core.embeddings.catalogue` -- every family built by one factory from (token strings, a parameter
  budget, a width): ``build(name, strings, budget, d)`` returns a module from token ids to ``(..., d)`` vectors.
- :mod:`hashlib_core.embeddings.diagnostics` -- what a family's hash decides before training: tokens that share their
  whole input signature, beside the birthday bound of its code space.
- :mod:`hashlib_core.embeddings.memories` -- hashed n-gram memories added to a language model's table: BLT's hash
  n-gram embeddings, over-encoding, an Engram-style gated memory, the bigram hash.
"""
from hashlib_core.embeddings.base import TokenEmbedding, check_token_embedding

__all__ = ["TokenEmbedding", "check_token_embedding"]
