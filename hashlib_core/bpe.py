"""Locally trained byte-level BPE tokenizers (``tokenizers``), with the special tokens every chapter shares.

No chapter downloads a tokenizer from the hub: the BERT baselines of HashFormers, the LSH features (§3.3), Table 6's
subword units and the MultiHashFormer language models all train a RoBERTa-style byte-level BPE on the staged corpus
with :func:`train_bpe`. The special tokens ``<s> <pad> </s> <unk> <mask>`` have ids 0-4 (the ids of HashFormers'
released word-level tokenizer, ``spec_token_dict``).
"""
from __future__ import annotations

from typing import Any, Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

__all__ = ["SPECIAL_TOKENS", "BOS_ID", "PAD_ID", "EOS_ID", "UNK_ID", "MASK_ID", "NUM_SPECIAL_TOKENS", "train_bpe",
           "bpe_to_hf_tokenizer"]

#: Special tokens and their ids, as in HashFormers' released tokenizers (``spec_token_dict``).
SPECIAL_TOKENS: dict[str, int] = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
BOS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = 0, 1, 2, 3, 4
#: Ids below this are special.
NUM_SPECIAL_TOKENS = 5


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
    """Wrap a :func:`train_bpe` tokenizer as a ``transformers`` fast tokenizer (for the BPE baselines' collators).

    The wrapper knows the special tokens, pads with ``<pad>`` (id 1) and saves/loads with ``save_pretrained``.
    """
    from transformers import PreTrainedTokenizerFast

    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"expected a tokenizers.Tokenizer (from train_bpe), got {type(tokenizer).__name__}")
    for token, expected in SPECIAL_TOKENS.items():
        if tokenizer.token_to_id(token) != expected:
            raise ValueError(
                f"special token {token!r} has id {tokenizer.token_to_id(token)}, expected {expected}; "
                "train the tokenizer with train_bpe"
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
