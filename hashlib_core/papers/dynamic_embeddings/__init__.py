"""Dynamic hash embeddings (EELBERT, Cohn et al., EMNLP 2023 Industry; the blog of Julian, 2023): BERT without an
input embedding table.

A token's vector is computed from its characters: the rolling hashes of its character n-grams, multiplied by fixed
per-column seeds, reduced modulo a bucket size, scaled to [-1, 1] and averaged per n-gram length. Only the abstract
of the paper is available here; the function follows the blog, and every choice is documented where it is made.

Where each part is implemented (the chapter: ``book/dynamic_embeddings.ipynb``; run it with
``python -m hashlib_core.papers.dynamic_embeddings --profile P``):

================================  ==================================================================================
the rolling hash of n-grams        :mod:`hashlib_core.hashing.rolling` (and the community code's recurrence, int32)
MD5 of n-grams (a second family)   :mod:`hashlib_core.hashing.ngram_md5`
the dynamic embedding              :class:`hashlib_core.embeddings.dynamic.DynamicHashEmbedding`,
                                   :func:`~hashlib_core.embeddings.dynamic.dynamic_vectors`
EELBERT (BERT without the table)   :mod:`~hashlib_core.papers.dynamic_embeddings.modeling`
BERT's WordPiece                   :func:`hashlib_core.wordpiece.bert_tokenizer`
models and profiles                :mod:`~hashlib_core.papers.dynamic_embeddings.profiles`
MLM pre-training, GLUE             :mod:`~hashlib_core.papers.dynamic_embeddings.training` (on the shared
                                   :mod:`hashlib_core.pretraining`, :mod:`hashlib_core.glue` and
                                   :mod:`hashlib_core.tuning`)
gaps, hash family, trend           :mod:`~hashlib_core.papers.dynamic_embeddings.analysis`
the blog's properties              :mod:`~hashlib_core.papers.dynamic_embeddings.properties`
sizes, shapes that fit, napkin     :mod:`~hashlib_core.papers.dynamic_embeddings.sizes`
throughput                         :mod:`hashlib_core.benchmarks.dynamic_embedding`
the abstract's and blog's claims   :mod:`~hashlib_core.papers.dynamic_embeddings.claims`
================================  ==================================================================================
"""
