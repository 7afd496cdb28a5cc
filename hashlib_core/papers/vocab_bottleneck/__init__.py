"""The vocabulary bottleneck: how much of a model is its ``V x d`` embedding matrix?

Every paper of the book motivates hashing with this arithmetic. The chapter builds each model the papers and the
blog talk about from its ``transformers`` configuration (on the ``meta`` device) and counts.

====================================  ==============================================================================
HashFormers §1 (BERT-base, RoBERTa)   :func:`~hashlib_core.papers.vocab_bottleneck.experiments.embedding_shares`
Blog (GPT-2 30%, Mistral-7B 2.5%)     :func:`~hashlib_core.papers.vocab_bottleneck.tables.compare_with_claims`
MultiHashFormer Table 7 backbones     :data:`~hashlib_core.model_shapes.MODEL_SPECS`
Counting rule (input, untied head)    :func:`hashlib_core.params.embedding_breakdown`
====================================  ==============================================================================

The chapter: ``book/vocab_bottleneck.ipynb``; ``python -m hashlib_core.papers.vocab_bottleneck --profile paper``.
"""
