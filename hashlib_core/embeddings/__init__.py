"""Token-embedding modules built on hashing (one submodule per paper).

- :mod:`hashlib_core.embeddings.hashed` -- Emb / Pool / Add / Proj (HashFormers, Eq. 1-3).
- :mod:`hashlib_core.embeddings.multihash` -- gated compositional embedding (MultiHashFormer, section 3.1).
"""
