"""WordPiece tokenizers from the staged BERT vocabularies (``tokenizers``; no hub access), built the way BERT's own
are: BERT's normaliser (control characters removed, CJK characters split apart; the uncased vocabulary lower-cases
and strips accents, the cased one does neither), BERT's white-space and punctuation split, greedy longest-match
WordPiece with ``[UNK]`` for a word it cannot cut (or longer than 100 characters).

* :func:`wordpiece_tokenizer`: a ``tokenizers.Tokenizer`` over a list of pieces in id order (pNLP-Mixer's mBERT);
* :func:`bert_tokenizer`: a ``transformers`` fast tokenizer for a staged BERT vocabulary with ``[CLS] ... [SEP]``
  around a text (``[CLS] a [SEP] b [SEP]`` for a pair, token types 0 and 1), what BERT-style models read.

``BertTokenizerFast(vocab_file=...)`` is not used: ``transformers`` 5 renamed the argument to ``vocab`` and ignores
the old name, silently building a five-token vocabulary.
"""
from __future__ import annotations

from typing import Any, Sequence

from tokenizers import Tokenizer, decoders
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer
from tokenizers.processors import TemplateProcessing

__all__ = ["wordpiece_tokenizer", "bert_tokenizer"]

#: whether each staged BERT vocabulary is lower-cased
_LOWERCASE = {"bert-base-uncased": True, "bert-base-multilingual-cased": False}


def wordpiece_tokenizer(vocab: Sequence[str], lowercase: bool = False) -> Tokenizer:
    """A WordPiece tokenizer over ``vocab`` (pieces in id order, e.g. ``load_wordpiece_vocab(...)``): BERT's
    normaliser (``lowercase`` also strips accents, as BERT's uncased vocabulary expects), BERT's pre-tokenizer, and
    ``[UNK]`` for a word it cannot cut."""
    vocab = list(vocab)
    if "[UNK]" not in vocab:
        raise ValueError("the WordPiece vocabulary has no [UNK] piece; pass a BERT vocabulary (vocab.txt lines)")
    tokenizer = Tokenizer(WordPiece({piece: i for i, piece in enumerate(vocab)}, unk_token="[UNK]",
                                    max_input_chars_per_word=100))
    tokenizer.normalizer = BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                          strip_accents=None if lowercase else False, lowercase=lowercase)
    tokenizer.pre_tokenizer = BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def bert_tokenizer(name: str = "bert-base-uncased", model_max_length: int = 512) -> Any:
    """A ``PreTrainedTokenizerFast`` for the staged BERT vocabulary ``name`` (``"bert-base-uncased"`` or
    ``"bert-base-multilingual-cased"``), with BERT's special tokens and its ``[CLS] ... [SEP]`` template."""
    from transformers import PreTrainedTokenizerFast

    from hashlib_core.data import load_wordpiece_vocab

    if name not in _LOWERCASE:
        raise ValueError(f"unknown BERT vocabulary {name!r}; choose one of {sorted(_LOWERCASE)}")
    vocab = load_wordpiece_vocab(name)
    tokenizer = wordpiece_tokenizer(vocab, lowercase=_LOWERCASE[name])
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[(t, tokenizer.token_to_id(t)) for t in ("[CLS]", "[SEP]")])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", sep_token="[SEP]",
                                   pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]",
                                   model_max_length=model_max_length,
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"])
