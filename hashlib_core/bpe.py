"""Byte-level BPE tokenizers (``tokenizers``): trained locally, or roberta-base's from the staged vocabulary.

No chapter downloads a tokenizer from the hub. :func:`train_bpe` trains a RoBERTa-style byte-level BPE on a staged
corpus (the chapters' BERT baselines, LSH features, Table 6's subword units, the MultiHashFormer language models); its
special tokens ``<s> <pad> </s> <unk> <mask>`` have ids 0-4 (the ids of HashFormers' released word-level tokenizer,
``spec_token_dict``). :func:`roberta_bpe` builds roberta-base's own 50,265-piece byte-level BPE from the staged
``vocab.json`` and ``merges.txt`` (data manifest entry ``wordpiece_vocab``): the tokenizer HashFormers' released
code builds its LSH features with (``RobertaTokenizerFast.from_pretrained('roberta-base')``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

__all__ = ["SPECIAL_TOKENS", "BOS_ID", "PAD_ID", "EOS_ID", "UNK_ID", "MASK_ID", "NUM_SPECIAL_TOKENS", "train_bpe",
           "bpe_to_hf_tokenizer", "ROBERTA_SPECIAL_TOKENS", "roberta_bpe"]

#: Special tokens and their ids, as in HashFormers' released tokenizers (``spec_token_dict``).
SPECIAL_TOKENS: dict[str, int] = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
BOS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = 0, 1, 2, 3, 4
#: Ids below this are special.
NUM_SPECIAL_TOKENS = 5
#: roberta-base's special tokens and their ids (fairseq's order: ``<mask>`` last, id 4 is ``'.'``).
ROBERTA_SPECIAL_TOKENS: dict[str, int] = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 50264}


def train_bpe(
    texts: Iterable[str],
    vocab_size: int,
    *,
    min_frequency: int = 2,
    lowercase: bool = False,
) -> Tokenizer:
    """Train a RoBERTa-style byte-level BPE tokenizer on ``texts`` (HashFormers §4.1-4.2 baselines, §3.3 features).

    The model matches ``roberta-base``'s tokenizer in kind: GPT-2 byte-level pre-tokenisation without a prefix
    space, the full 256-byte initial alphabet (so every string is encodable and there is no ``<unk>`` at run time),
    the special tokens ``<s> <pad> </s> <unk> <mask>`` at ids 0-4 (RoBERTa puts ``<mask>`` last; here all special
    ids are the word-level tokenizer's), and the ``<s> A </s></s> B </s>`` post-processor. ``encode(text)`` adds the
    special tokens; pass ``add_special_tokens=False`` for bare subwords (as the LSH features do).

    Parameters
    ----------
    texts:
        Training corpus, one string per document or line.
    vocab_size:
        Target vocabulary size including the 5 special tokens and the 256 byte symbols; the result can be smaller
        when the corpus runs out of merges (``get_vocab_size()`` tells).
    min_frequency:
        Minimum pair count for a merge.
    lowercase:
        Lower-case before everything else (a normaliser); the word-level HashFormer tokenizer lower-cases, so LSH
        features of its words are best computed with a lower-cased BPE, while RoBERTa itself is cased.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    smallest = len(SPECIAL_TOKENS) + len(alphabet)
    if vocab_size < smallest:
        raise ValueError(f"vocab_size must be >= {smallest} (5 special tokens + 256 byte symbols), got {vocab_size}")
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of strings, not one str; wrap it in a list")
    tokenizer = Tokenizer(models.BPE())
    if lowercase:
        tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=alphabet,
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", EOS_ID), ("<s>", BOS_ID))
    return tokenizer


def bpe_to_hf_tokenizer(tokenizer: Tokenizer, model_max_length: int = 512) -> Any:
    """Wrap a :func:`train_bpe` tokenizer, or :func:`roberta_bpe`, as a ``transformers`` fast tokenizer (for the BPE
    baselines' collators).

    The wrapper knows the special tokens (ids 0-4, or roberta-base's with ``<mask>`` last), pads with ``<pad>``
    (id 1) and saves/loads with ``save_pretrained``.
    """
    from transformers import PreTrainedTokenizerFast

    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"expected a tokenizers.Tokenizer (from train_bpe), got {type(tokenizer).__name__}")
    specials = ROBERTA_SPECIAL_TOKENS if tokenizer.token_to_id("<mask>") == ROBERTA_SPECIAL_TOKENS["<mask>"] \
        else SPECIAL_TOKENS
    for token, expected in specials.items():
        if tokenizer.token_to_id(token) != expected:
            raise ValueError(
                f"special token {token!r} has id {tokenizer.token_to_id(token)}, expected {expected}; "
                "train the tokenizer with train_bpe, or use roberta_bpe()"
            )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=model_max_length,
    )


@lru_cache(maxsize=1)
def roberta_bpe() -> Tokenizer:
    """roberta-base's byte-level BPE (50,265 pieces, 50,000 merges), built from the staged files; cached.

    The files are ``roberta-base/vocab.json`` and ``roberta-base/merges.txt`` of the data manifest entry
    ``wordpiece_vocab``, located (and checked against their sha256) by :func:`hashlib_core.data.dataset_path`:
    from ``$HASHLIB_DATA_DIR``, else the cache, else downloaded. The tokenizer is the one
    ``RobertaTokenizerFast.from_pretrained('roberta-base')`` wraps, which HashFormers' released ``_get_lsh`` /
    ``_get_proj`` call as ``tokenize(text)``: GPT-2 byte-level pre-tokenisation **without** a prefix space (so
    ``'unbelievable'`` and ``' unbelievable'`` differ), no normaliser (cased; the released word tokenizer lower-cases
    words before their features are computed), a plain BPE model without ``<unk>`` (every byte is a piece), and
    ``<s> <pad> </s> <unk> <mask>`` as special added tokens (ids 0-3 and 50,264; matched whole in any text, ``<mask>``
    also taking the space before it). ``encode(text)`` adds ``<s> ... </s>`` (RoBERTa's post-processor), as the
    released tokenizer's ``encode`` does; pass ``add_special_tokens=False`` for the bare pieces, as ``tokenize`` and
    the LSH features (:mod:`hashlib_core.hashing.lsh`) do.

    The one object is shared by every caller (it holds the BPE merge cache): do not change its settings; copy it
    with ``Tokenizer.from_str(roberta_bpe().to_str())`` first. (``transformers``' ``RobertaTokenizer(vocab_file=...,
    merges_file=...)`` must not be used instead: in transformers 5.23 it silently builds a 5-piece tokenizer.)

    Raises :class:`hashlib_core.data.DatasetUnavailableError` (with the remedy) when the files are not available.
    """
    from hashlib_core.data import dataset_path

    vocab = dataset_path("wordpiece_vocab", "roberta-base/vocab.json")
    merges = dataset_path("wordpiece_vocab", "roberta-base/merges.txt")
    tokenizer = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", ROBERTA_SPECIAL_TOKENS["</s>"]),
                                                            ("<s>", ROBERTA_SPECIAL_TOKENS["<s>"]))
    tokenizer.add_special_tokens([AddedToken(token, lstrip=token == "<mask>", normalized=False, special=True)
                                  for token in ROBERTA_SPECIAL_TOKENS])
    for token, expected in ROBERTA_SPECIAL_TOKENS.items():
        if tokenizer.token_to_id(token) != expected:
            raise ValueError(f"{vocab.name} gives {token!r} the id {tokenizer.token_to_id(token)}, not roberta-base's "
                             f"{expected}: the staged file is not roberta-base's vocabulary; restage it (see the data "
                             "manifest entry 'wordpiece_vocab')")
    return tokenizer
