"""HashFormers (Xue & Aletras, EMNLP 2022): hashing words instead of storing a vocabulary.

A BERT-base encoder whose token-embedding matrix is replaced by an embedding computed from a hash of the whole
word: MD5 (a "random" hash) or LSH over subword features (similar words, similar codes); the hash feeds Emb(N) (a
table indexed by ``hash % N``) or a compressed layer reading the 128-bit code (Pool, Add, Proj). Without a
vocabulary there is no softmax over tokens, so the models are pre-trained with Shuffle+Random.

Where each part of the paper is implemented:

==============================  ====================================================================================
§3.1, Emb(N)                    :class:`hashlib_core.embeddings.hashed.HashBucketEmbedding`
§3.2, MD5                       :class:`hashlib_core.hashing.md5.KeyedMD5Hasher` (the released HMAC-MD5, key "en")
§3.3, LSH (permutation trick)   :class:`hashlib_core.hashing.lsh.LSHBucketHasher`, :class:`~hashlib_core.hashing.lsh.PermutationLSH`
§3.5, 128-bit LSH codes         :class:`hashlib_core.hashing.lsh.LSHBitHasher`
Eq. 1, Pool                     :class:`hashlib_core.embeddings.hashed.PoolEmbedding`
Eq. 2, Add                      :class:`hashlib_core.embeddings.hashed.AdditiveEmbedding`
Add's two storages (ours)       :mod:`~hashlib_core.papers.hashformers.add_diagnosis` (codebooks vs differences)
Eq. 3, Proj                     :class:`hashlib_core.embeddings.hashed.PearsonProjection`
Eq. 4, PRR                      :func:`~hashlib_core.papers.hashformers.finetuning.glue_table`
Eq. 5-7, PCR and PoEP           :func:`~hashlib_core.papers.hashformers.table2.hashformers_table2`
Eq. 8, speed-up                 :func:`~hashlib_core.papers.hashformers.timing.timing_table`
§3.6, Shuffle+Random            :class:`~hashlib_core.papers.hashformers.objectives.ShuffleRandomCollator`
§4.1, baselines                 :mod:`~hashlib_core.papers.hashformers.baselines`, ProFormer: :func:`~hashlib_core.papers.hashformers.configuration.proformer_config`
§4.2, the models                :mod:`~hashlib_core.papers.hashformers.modeling`, :mod:`~hashlib_core.papers.hashformers.configuration`
Word tokenizer (released)       :class:`~hashlib_core.papers.hashformers.tokenization.HashFormerTokenizer`
Table 1, Table 2 PRR            :mod:`~hashlib_core.papers.hashformers.pretraining`, :mod:`~hashlib_core.papers.hashformers.finetuning`
Table 2, memory                 :mod:`~hashlib_core.papers.hashformers.table2`
Table 3, speed                  :mod:`~hashlib_core.papers.hashformers.timing`
Table 6, subword units          :class:`~hashlib_core.papers.hashformers.tokenization.SubwordHashFormerTokenizer`
GLUE metrics (§4.3)             :func:`hashlib_core.glue.glue_metric`
==============================  ====================================================================================

The chapter: ``book/hashformers.ipynb``; its experiments: :data:`~hashlib_core.papers.hashformers.experiments.CHAPTER`
(``python -m hashlib_core.papers.hashformers --profile cpu``); profiles: :mod:`~hashlib_core.papers.hashformers.profiles`;
tables and figures of the page: :mod:`~hashlib_core.papers.hashformers.tables`, :mod:`~hashlib_core.papers.hashformers.figures`;
the paper's claims with computed verdicts: :mod:`~hashlib_core.papers.hashformers.claims`.
"""
