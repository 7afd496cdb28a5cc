"""MD5 token hashing as in HashFormers (Xue & Aletras, EMNLP 2022, §3.2 "Message-Digest hashing" and §3.5).

The paper maps a token ``t`` to the 128-bit MD5 value ``v = H(t)`` ("reproduced given the same secret key") and
uses either the embedding index ``i = v % N`` (HashFormer-MD-Emb, §3.2) or the 128 bits themselves (the compressed
Pool/Add/Proj variants, §3.4-3.5, T = 128).

What the released code does (``HUIYINXUE/hashformer``, ``src/utils``; see the implementation notes A1):

* the hash is **HMAC-MD5 with the key** ``b"en"`` of the token's UTF-8 bytes;
* the Emb variant's index is ``int(hexdigest, 16) % 50260 + 5``: the offset 5 skips the five special ids
  ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3, ``<mask>`` 4;
* the 128-bit variants expand the full digest value to bits with ``format(v, '0>128b')``, i.e. most significant bit
  first, which is the digest's bytes in order, each byte MSB first.

Plain (unkeyed) MD5 is available with ``key=None``. Neither plain MD5 nor HMAC-MD5 with ``b"en"`` reproduces the
digests the paper prints for 'play' and 'plays' (§3.2): the printed example was made with an unreleased key.

Tokens follow the contract of :func:`hashlib_core.hashing.base.validate_token` (UTF-8 bytes of any valid ``str``,
including ``''``; lone surrogates raise ``ValueError``; non-``str`` raises ``TypeError``).
"""
from __future__ import annotations

import hashlib
import hmac
from typing import Any, Iterable, Mapping

import numpy as np
import torch

from hashlib_core.hashing.base import TokenHasher, check_int, validate_token, validate_tokens

__all__ = ["DEFAULT_KEY", "md5_digest", "md5_hex", "KeyedMD5Hasher"]

#: The HMAC key of the released HashFormers code.
DEFAULT_KEY: bytes = b"en"

#: Embedding rows of HashFormer-MD-Emb (50K variant) and the number of special ids before the hashed ones.
HASHFORMERS_NUM_BUCKETS = 50260
HASHFORMERS_OFFSET = 5


def _check_key(key: Any) -> bytes | None:
    if key is None:
        return None
    if isinstance(key, str):
        raise TypeError(f"the MD5 key must be bytes or None, got str {key!r}; encode it, e.g. {key!r}.encode('utf-8')")
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"the MD5 key must be bytes or None (plain MD5), got {type(key).__name__}")
    return bytes(key)


def _digest(data: bytes, key: bytes | None) -> bytes:
    if key is None:
        return hashlib.md5(data, usedforsecurity=False).digest()
    return hmac.digest(key, data, "md5")


_MD5_BLOCK = 64


class _PrecomputedHMACMD5:
    """HMAC-MD5 (RFC 2104) with the key's inner and outer MD5 states computed once.

    ``HMAC(K, m) = MD5((K' ^ opad) || MD5((K' ^ ipad) || m))`` with ``K'`` the key (MD5-hashed first if longer than
    the 64-byte block) zero-padded to 64 bytes. Copying the two prepared states per message gives the same digest
    as :func:`hmac.digest` about twice as fast, which matters when hashing millions of tokens.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) > _MD5_BLOCK:
            key = hashlib.md5(key, usedforsecurity=False).digest()
        key = key.ljust(_MD5_BLOCK, b"\0")
        self._inner = hashlib.md5(bytes(b ^ 0x36 for b in key), usedforsecurity=False)
        self._outer = hashlib.md5(bytes(b ^ 0x5C for b in key), usedforsecurity=False)

    def __call__(self, data: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(data)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


def md5_digest(token: str, key: bytes | None = DEFAULT_KEY) -> bytes:
    """The 16-byte MD5 digest of ``token``'s UTF-8 bytes: HMAC-MD5 with ``key``, or plain MD5 when ``key`` is None."""
    return _digest(validate_token(token).encode("utf-8"), _check_key(key))


def md5_hex(token: str, key: bytes | None = DEFAULT_KEY) -> str:
    """:func:`md5_digest` as 32 lower-case hex characters (the ``hexdigest`` the HashFormers code parses)."""
    return md5_digest(token, key).hex()


class KeyedMD5Hasher(TokenHasher):
    """HashFormers' MD5 hasher: an embedding index ``int(digest) % num_buckets + offset`` and a 128-bit code.

    Parameters
    ----------
    num_buckets:
        ``N`` in ``i = v % N`` (HashFormers §3.2); the released Emb model uses 50,260.
    offset:
        Added to every index so that ids ``0 .. offset-1`` stay free for special tokens (released code: 5).
    key:
        HMAC key (released code: ``b"en"``); ``None`` gives plain MD5.

    ``hash(token)`` is :meth:`index`; ``hash_batch(tokens)`` is :meth:`batch_index`.
    """

    name = "md5"

    def __init__(
        self,
        num_buckets: int = HASHFORMERS_NUM_BUCKETS,
        offset: int = HASHFORMERS_OFFSET,
        key: bytes | None = DEFAULT_KEY,
    ) -> None:
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=1)
        self.offset = check_int("offset", offset, minimum=0)
        self.key = _check_key(key)
        self._hmac = None if self.key is None else _PrecomputedHMACMD5(self.key)

    # -- single tokens -------------------------------------------------------------------------------------
    def _digest_bytes(self, data: bytes) -> bytes:
        if self._hmac is None:
            return hashlib.md5(data, usedforsecurity=False).digest()
        return self._hmac(data)

    def digest(self, token: str) -> bytes:
        """The 16-byte (HMAC-)MD5 digest of the token's UTF-8 bytes (equal to :func:`md5_digest`)."""
        return self._digest_bytes(validate_token(token).encode("utf-8"))

    def value(self, token: str) -> int:
        """The digest as an unsigned 128-bit integer ``v`` (``int(hexdigest, 16)``)."""
        return int.from_bytes(self.digest(token), "big")

    def index(self, token: str) -> int:
        """``v % num_buckets + offset``: the HashFormer-MD-Emb embedding row (§3.2)."""
        return self.value(token) % self.num_buckets + self.offset

    def bits(self, token: str) -> torch.Tensor:
        """The 128-bit code as a ``uint8`` tensor of shape ``(128,)``, most significant bit first.

        Equal to ``[int(c) for c in format(v, '0128b')]``, the expansion of the released collators.
        """
        return torch.from_numpy(np.unpackbits(np.frombuffer(self.digest(token), dtype=np.uint8)))

    # -- batches --------------------------------------------------------------------------------------------
    def batch_digests(self, tokens: Iterable[str]) -> list[bytes]:
        """Digests of many tokens (validated in bulk, order kept)."""
        digest = self._digest_bytes
        return [digest(t.encode("utf-8")) for t in validate_tokens(tokens)]

    def batch_index(self, tokens: Iterable[str]) -> torch.Tensor:
        """:meth:`index` of every token as a ``torch.long`` tensor of shape ``(n,)``."""
        n, off = self.num_buckets, self.offset
        values = [int.from_bytes(d, "big") % n + off for d in self.batch_digests(tokens)]
        return torch.tensor(values, dtype=torch.long)

    def batch_bits(self, tokens: Iterable[str]) -> torch.Tensor:
        """:meth:`bits` of every token as a ``uint8`` tensor of shape ``(n, 128)``."""
        raw = np.frombuffer(b"".join(self.batch_digests(tokens)), dtype=np.uint8).reshape(-1, 16)
        return torch.from_numpy(np.unpackbits(raw, axis=1))

    # -- TokenHasher -----------------------------------------------------------------------------------------
    def hash(self, token: str) -> int:
        return self.index(token)

    def hash_batch(self, tokens: Iterable[str]) -> torch.Tensor:
        return self.batch_index(tokens)

    def params(self) -> dict[str, Any]:
        return {
            "num_buckets": self.num_buckets,
            "offset": self.offset,
            "key_hex": None if self.key is None else self.key.hex(),
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "KeyedMD5Hasher":
        params = dict(params)
        key_hex = params.pop("key_hex", None)
        return cls(**params, key=None if key_hex is None else bytes.fromhex(key_hex))

    def __repr__(self) -> str:
        return f"KeyedMD5Hasher(num_buckets={self.num_buckets}, offset={self.offset}, key={self.key!r})"
