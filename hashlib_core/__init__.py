"""hashlib_core: the library behind the reproduction book for hash-based token embeddings.

Modules, one per concept:

- :mod:`hashlib_core.hashing` -- deterministic token hashers (keyed MD5, MMH3 multi-hash signatures, LSH) and the
  collision-free signature registry.
- :mod:`hashlib_core.embeddings` -- embedding layers built on those hashes.
- :mod:`hashlib_core.models` -- Hugging Face-style models.
- :mod:`hashlib_core.decoding` -- decoders and search over hashed output spaces.
- :mod:`hashlib_core.data` -- dataset manifest and loaders (``datasets``).
- :mod:`hashlib_core.params` -- parameter accounting from instantiated modules.
- :mod:`hashlib_core.results` -- results files and paper-vs-ours tables.
- :mod:`hashlib_core.experiments` -- profiles, device, seeding, training loop, batch runner, chapter experiments.
"""
__version__ = "0.1.0"
