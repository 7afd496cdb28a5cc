"""Deterministic token hashing: HashFormers' (HMAC-)MD5 and MultiHashFormer's MurmurHash3 signatures.

Every hasher here gives the same output in every process, on every machine and under every ``PYTHONHASHSEED``
(no use of Python's salted ``hash()``), and hashes a token by its UTF-8 bytes (see :mod:`.base` for the contract).

* :mod:`.base`: the :class:`TokenHasher` interface, :func:`validate_token`, :func:`hasher_from_config`.
* :mod:`.md5`: HashFormers §3.2 MD5 / HMAC-MD5 (key ``b"en"``) indices and 128-bit codes.
* :mod:`.multihash`: MultiHashFormer §3.1 MurmurHash3 multi-hash signatures.
* :mod:`.registry`: :class:`SignatureRegistry`, globally unique signatures with rehashing, expansion and files.
* :mod:`.lsh`: HashFormers §3.3-3.5 locality-sensitive hashing of a word's BPE pieces (bucket and T-bit code).
* :mod:`.lsh_trigram`: MultiHashFormer's optional character-trigram LSH coordinates and LSH:MMH3 mixed signatures.
* :mod:`.minhash`: pNLP-Mixer §3.1 MinHash fingerprints of subword units and tokens, the counting Bloom filter and
  the vocabulary's fingerprint cache (not a :class:`TokenHasher`: it works on a token's subword units).
* :mod:`.projections`: pNLP-Mixer §5.1 projections (MinHash, Binary, TSP, SimHash) of a word's subword-unit ids
  behind one :class:`Projection` interface, and :func:`build_projection` by name.

A new hasher module subclasses :class:`TokenHasher` with a unique ``name`` and is re-exported here.
"""
from hashlib_core.hashing.base import TokenHasher, hasher_from_config, validate_token, validate_tokens
from hashlib_core.hashing.md5 import KeyedMD5Hasher, md5_digest, md5_hex
from hashlib_core.hashing.multihash import MMH3MultiHasher, mmh3_bucket, mmh3_fingerprint
from hashlib_core.hashing.registry import RegistryFileError, SignatureRegistry
from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher
from hashlib_core.hashing.lsh_trigram import TrigramLSHHasher, mixed_signature_table
from hashlib_core.hashing.minhash import FingerprintCache, MinHashFingerprinter, counting_bloom_filter
from hashlib_core.hashing.projections import (BinaryProjection, MinHashProjection, Projection, SimHashProjection,
                                              TSPProjection, build_projection)

__all__ = [
    "TokenHasher",
    "hasher_from_config",
    "validate_token",
    "validate_tokens",
    "md5_digest",
    "md5_hex",
    "KeyedMD5Hasher",
    "MMH3MultiHasher",
    "mmh3_bucket",
    "mmh3_fingerprint",
    "SignatureRegistry",
    "RegistryFileError",
    "LSHBucketHasher",
    "LSHBitHasher",
    "TrigramLSHHasher",
    "mixed_signature_table",
    "MinHashFingerprinter",
    "FingerprintCache",
    "counting_bloom_filter",
    "Projection",
    "MinHashProjection",
    "BinaryProjection",
    "TSPProjection",
    "SimHashProjection",
    "build_projection",
]
