"""Superbloom (Anderson, Huang, Rendle, Zhang, Rosenblatt; ICLR 2020 submission): Bloom-filter digests of opaque
ids read by a multi-layer Transformer, decoded by beam search with an exactness certificate.

Each id becomes ``m`` hash tokens, each shared by ``α`` ids; a BERT-style Transformer trained with masked-item
modelling predicts the ``m`` hash tokens of a masked id, and Algorithm 1 recovers the ids from the ``m``
distributions. No public implementation exists: every choice is ours and documented where it is made.

Where each part is implemented (the chapter: ``book/superbloom.ipynb``; run it with
``python -m hashlib_core.papers.superbloom --profile P``):

==============================  ====================================================================================
§3.2, α-to-one hash maps         :class:`hashlib_core.hashing.bloom.BloomHashMaps` (inverse tables, special tokens)
§2, Fig. 1, the model            :class:`~hashlib_core.papers.superbloom.modeling.SuperbloomForMaskedLM`
§2.4, masked items, m-hash loss  :class:`~hashlib_core.papers.superbloom.data.ItemMaskingCollator`, ``SuperbloomForMaskedLM.forward``
§2.5, Algorithm 1                :func:`hashlib_core.decoding.beam.beam_topk` (certificate), :func:`~hashlib_core.decoding.beam.exhaustive_topk`
§3.1, data (stand-ins)           :mod:`~hashlib_core.papers.superbloom.data` (FB15k-237 neighbour sets; Gowalla,
                                 Diginetica, Wikispeedia and Last.fm sets: the ``other_datasets`` experiment,
                                 :mod:`~hashlib_core.papers.superbloom.experiments_datasets`)
Tables 1-3, Fig. 3, App. B       :mod:`~hashlib_core.papers.superbloom.experiments`, :mod:`~hashlib_core.papers.superbloom.params`
App. E, example predictions      :func:`~hashlib_core.papers.superbloom.training.example_predictions` (Wikispeedia
                                 page titles, Last.fm artist names: :func:`~hashlib_core.papers.superbloom.data.display_names`)
§2.5, "10 times faster"          :mod:`hashlib_core.benchmarks.superbloom_decoding` (synthetic distributions) and the
                                 ``decoding`` experiment (a model trained inside a 1M-id space)
§4, Tables 4-5, on Penn Treebank :mod:`~hashlib_core.papers.superbloom.language` (vocabulary, windows), the
                                 ``language_d<width>`` parts and ``language`` (early stopping, the sweep, seeds)
§4, a context-free yardstick     :func:`~hashlib_core.papers.superbloom.language.context_free_recall` (the
                                 ``language_prior`` experiment)
diagnosis: the hash's coarseness :mod:`~hashlib_core.papers.superbloom.experiments_alpha` (Superbloom at several α on
                                 Gowalla beside the unhashed baseline: the ``alpha`` experiment)
§2.4, training time              :mod:`hashlib_core.benchmarks.superbloom_train_step` and the ``train_time``
                                 experiment (:mod:`~hashlib_core.papers.superbloom.experiments_speed`)
diagnosis: what the sets hold    :mod:`~hashlib_core.papers.superbloom.yardsticks` (popularity and co-occurrence
                                 counts, no training: the ``yardsticks`` experiment,
                                 :mod:`~hashlib_core.papers.superbloom.experiments_yardsticks`); both through the
                                 hash (:mod:`~hashlib_core.papers.superbloom.yardsticks_hashed`), read on the page by
                                 :mod:`~hashlib_core.papers.superbloom.tables_ceiling`
diagnosis: training length       :mod:`~hashlib_core.papers.superbloom.experiments_longer` (the claims' deep pair at
                                 a longer cap: the ``longer`` experiment)
The paper's claims, verdicts     :mod:`~hashlib_core.papers.superbloom.claims` (the ``claims`` experiment, last)
==============================  ====================================================================================
"""
