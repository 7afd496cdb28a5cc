"""The common interface of every token hasher, and the token validation they all share.

Every hasher in this package maps a token (a Python ``str``) to a number, a bit vector or a signature that is the
same in every process, on every machine and under every ``PYTHONHASHSEED``: the hash functions are MD5/HMAC-MD5
(:mod:`hashlib`, :mod:`hmac`) and MurmurHash3 (:mod:`mmh3`) applied to the token's UTF-8 bytes, never Python's
salted built-in ``hash()``.

Token contract (:func:`validate_token`), shared by all hashers:

* every ``str`` that encodes to UTF-8 is hashed by its UTF-8 bytes, exactly as given: the empty string, whitespace,
  NUL characters, characters outside the Basic Multilingual Plane (emoji) and arbitrarily long tokens are all valid
  and are *not* normalised, stripped or lower-cased (tokenisation is the caller's job);
* a ``str`` holding a lone surrogate (e.g. ``"\\ud800"``, which has no UTF-8 encoding) raises ``ValueError``. This
  check matters beyond tidiness: mmh3 5.3.1 crashes the interpreter (segmentation fault) on such strings;
* anything that is not a ``str`` (``bytes``, ``int``, ``None``, ...) raises ``TypeError``. Subclasses of ``str``
  (e.g. ``numpy.str_``) are accepted and converted to plain ``str``.

A hasher describes itself with :meth:`TokenHasher.config`, a JSON-able dict holding its ``name`` and parameters;
:func:`hasher_from_config` rebuilds an equal hasher from that dict, so results can record which hash produced them.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Iterable, Mapping

__all__ = ["TokenHasher", "validate_token", "validate_tokens", "refuse_empty", "hasher_from_config", "check_int",
           "check_positive_int"]


def _lone_surrogate_message(token: str, where: str) -> str:
    position = next(i for i, ch in enumerate(token) if 0xD800 <= ord(ch) <= 0xDFFF)
    return (
        f"{where} contains a lone surrogate {token[position]!r} at character {position}, which has no UTF-8 "
        f"encoding, so it cannot be hashed; decode your text with errors='replace' (or 'surrogatepass' and fix the "
        f"source) so that every token is valid Unicode"
    )


def validate_token(token: Any) -> str:
    """Return ``token`` as a plain ``str`` if it can be hashed, else raise (see the module docstring).

    Raises
    ------
    TypeError
        ``token`` is not a ``str`` (``bytes`` must be decoded first, numbers converted with ``str()``).
    ValueError
        ``token`` holds a lone surrogate and therefore has no UTF-8 encoding.
    """
    if not isinstance(token, str):
        hint = (" (decode bytes first, e.g. token.decode('utf-8'))" if isinstance(token, (bytes, bytearray))
                else "; convert it with str(token) or drop it")
        raise TypeError(f"a token must be a str, got {type(token).__name__} {token!r:.60}{hint}")
    if type(token) is not str:
        token = str.__str__(token)
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(_lone_surrogate_message(token, f"token {token!r:.60}")) from None
    return token


def refuse_empty(tokens: list[str], owner: str) -> list[str]:
    """``tokens`` unchanged if none is ``''``, else ``ValueError`` naming ``owner`` and the first empty position.

    The one policy of every signature builder (:class:`~hashlib_core.hashing.SignatureRegistry`, the trigram LSH
    coordinates and their mixed tables): a vocabulary entry that matches no text is almost always a tokenisation
    bug, so it is refused rather than given a signature. The plain hashers keep the contract above and hash ``''``.
    """
    if "" in tokens:
        raise ValueError(
            f"{owner}: token at position {tokens.index('')} is the empty string, which signature builders refuse "
            f"(a vocabulary entry that matches no text is almost always a tokenisation bug); drop empty strings "
            f"first, e.g. [t for t in tokens if t]"
        )
    return tokens


def validate_tokens(tokens: Iterable[Any]) -> list[str]:
    """Validate a batch of tokens; return them as a list of plain ``str`` (order kept, duplicates kept).

    The same contract as :func:`validate_token`, checked in bulk (one type scan and one UTF-8 encode of the joined
    text), so validating a million tokens costs a fraction of a second. Errors name the offending position.

    Raises
    ------
    TypeError
        ``tokens`` is itself a ``str`` (a common slip: pass ``[token]``), or an element is not a ``str``.
    ValueError
        An element holds a lone surrogate.
    """
    if isinstance(tokens, (str, bytes, bytearray)):
        raise TypeError(
            f"expected an iterable of tokens, got a single {type(tokens).__name__} {tokens!r:.60}; "
            f"wrap it in a list, e.g. [token]"
        )
    if not isinstance(tokens, Iterable):
        raise TypeError(f"expected an iterable of str tokens, got {type(tokens).__name__}")
    out = tokens if type(tokens) is list else list(tokens)
    if not set(map(type, out)) <= {str}:
        out = list(out)
        for i, t in enumerate(out):
            if type(t) is not str:
                try:
                    out[i] = validate_token(t)
                except TypeError as exc:
                    raise TypeError(f"token at position {i}: {exc}") from None
    try:
        "".join(out).encode("utf-8")
    except UnicodeEncodeError:
        for i, t in enumerate(out):
            try:
                t.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(_lone_surrogate_message(t, f"token at position {i} ({t!r:.60})")) from None
    return out


def check_int(name: str, value: Any, *, minimum: int, maximum: int | None = None, fix: str = "") -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) in ``[minimum, maximum]``; else raise a clear error."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bound}, got {value}{'; ' + fix if fix else ''}")
    return int(value)


def check_positive_int(name: str, value: Any, owner: str) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) >= 1; else a ``ValueError`` naming ``owner`` and ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r:.40}")
    return int(value)


class TokenHasher(ABC):
    """A deterministic function of a token, with a JSON-able description.

    Subclasses set the class attribute ``name`` (unique; used by :func:`hasher_from_config`) and implement
    :meth:`hash`, :meth:`hash_batch` and :meth:`params`. Calling the hasher is the same as :meth:`hash`.
    Two hashers are equal when their configs are equal (hashers are not hashable themselves).
    """

    name: ClassVar[str]
    _by_name: ClassVar[dict[str, type["TokenHasher"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if name is None:
            return
        known = TokenHasher._by_name.get(name)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"hasher name {name!r} is already used by {known.__qualname__}; choose another name")
        TokenHasher._by_name[name] = cls

    @abstractmethod
    def hash(self, token: str) -> Any:
        """The hash of one token (validated with :func:`validate_token`)."""

    @abstractmethod
    def hash_batch(self, tokens: Iterable[str]) -> Any:
        """The hashes of many tokens, stacked along a first axis of length ``len(tokens)``."""

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The constructor parameters as JSON-able values (no ``name``)."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "TokenHasher":
        """Build a hasher from :meth:`params` output; override when a parameter is not JSON-native."""
        return cls(**params)

    def __call__(self, token: str) -> Any:
        return self.hash(token)

    def config(self) -> dict[str, Any]:
        """``{"name": ..., **params}``: JSON-able and enough for :func:`hasher_from_config` to rebuild the hasher."""
        return {"name": self.name, **self.params()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TokenHasher) and self.config() == other.config()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def hasher_from_config(config: Mapping[str, Any]) -> TokenHasher:
    """Rebuild a hasher from :meth:`TokenHasher.config` output (e.g. read back from JSON).

    Raises ``ValueError`` for a config without a known ``name``, naming the known ones.
    """
    if not isinstance(config, Mapping) or "name" not in config:
        raise ValueError(f"a hasher config must be a mapping with a 'name' key, got {config!r:.200}")
    params = dict(config)
    name = params.pop("name")
    cls = TokenHasher._by_name.get(name)
    if cls is None:
        known = ", ".join(sorted(TokenHasher._by_name))
        raise ValueError(f"unknown hasher name {name!r}; known hashers: {known} (import the module defining it)")
    return cls.from_params(params)
