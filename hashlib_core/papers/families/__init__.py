"""Every family on one backbone: the hash-embedding families of the book's papers and of the work they cite, side by
side on one encoder (Track A, *replace the table*) and one small causal LM (Track B, *add to the table*), at equal
parameter budgets, with the same learning-rate sweep, early stopping and seeds for every family.

No paper and no repository puts these families side by side on a language backbone: each paper compares against its
own baseline, and the multi-method benchmarks that exist cover recommender models only.

==============================  ====================================================================================
the families (one factory)       :func:`~hashlib_core.embeddings.catalogue.build`
the memories (Track B)           :mod:`~hashlib_core.embeddings.memories`, :func:`~.modeling.build_memory`
the backbones                    :mod:`~hashlib_core.papers.families.modeling`
Track A's data, typos, deciles   :mod:`~hashlib_core.papers.families.data`
Track A's protocol               :mod:`~hashlib_core.papers.families.track_a`
Track B's protocol               :mod:`~hashlib_core.papers.families.track_b`
collisions, throughput           :mod:`hashlib_core.embeddings.diagnostics`, :mod:`hashlib_core.benchmarks.families`
tables, figures, claims          :mod:`~.tables`, :mod:`~.figures`, :mod:`~.claims`
==============================  ====================================================================================

The chapter: ``book/families.ipynb``; ``python -m hashlib_core.papers.families --profile P``.
"""
