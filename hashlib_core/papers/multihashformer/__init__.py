"""MultiHashFormer (Xue, Yamaguchi & Aletras): a language model without a vocabulary matrix.

Every token gets a collision-free **signature** of H bucket ids (MurmurHash3, the last coordinate rehashed on
collision); it is embedded as a gated mixture of H rows of H small tables (the Hash Encoder), a Qwen3 decoder
processes the sequence, and a cascaded Hash Decoder tied to the encoder tables predicts the next token's signature
one coordinate at a time. Inference renormalises the product of the H bucket distributions over the signatures of
real tokens (``P_inf``). Parameters depend on ``H * B``, not on V; new tokens are new signatures, not new rows.

Where each part of the paper is implemented:

=================================  ==================================================================================
Section 3.1, signatures            :class:`hashlib_core.hashing.SignatureRegistry` (MMH3, rehash on collision)
Section 3.1, gated embedding       :class:`hashlib_core.embeddings.multihash.GatedCompositionalEmbedding`
Sections 3.2, 4.1, the model       :class:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM`
Section 3.3, cascaded decoder      :class:`~hashlib_core.papers.multihashformer.decoding.CascadedHashDecoder`
Section 3.4, ``P_train`` (loss)    :func:`hashlib_core.decoding.multihash.multihash_loss`
Section 3.4, ``P_inf``             :func:`hashlib_core.decoding.multihash.score_vocab` / ``vocab_log_probs``
Generation over valid tokens       :func:`~hashlib_core.papers.multihashformer.decoding.generate`
Section 4.4, expansion             :meth:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM.expand_vocabulary`,
                                   :mod:`~hashlib_core.papers.multihashformer.expansion`
Table 1, #Param columns            :func:`~hashlib_core.papers.multihashformer.params.multihashformer_table1_params`
Table 1 families, LM quality       :func:`~hashlib_core.papers.multihashformer.experiments.lm_quality`
Table 1 at three sizes (scaling)   :mod:`~hashlib_core.papers.multihashformer.scaling`
Learning-rate sweep (per family)   :meth:`~hashlib_core.papers.multihashformer.lm.LanguageModels.learning_rate`
Table 2, Appendix B (Card-660)     :mod:`~hashlib_core.papers.multihashformer.card660`
Table 3, Single-ID vs Multi-ID     :func:`~hashlib_core.papers.multihashformer.presets.single_id_table`,
                                   :func:`~hashlib_core.papers.multihashformer.experiments.single_vs_multi`
Table 4, LSH coordinates           :func:`hashlib_core.hashing.lsh_trigram.mixed_signature_table`,
                                   :func:`~hashlib_core.papers.multihashformer.experiments.lsh_mix`
Table 7, model shapes              :data:`~hashlib_core.papers.multihashformer.presets.BACKBONE_PRESETS`
Figure 3, H x B sweep              :func:`~hashlib_core.papers.multihashformer.experiments.hb_sweep`
Appendix A, softmax bottleneck     :func:`~hashlib_core.papers.multihashformer.experiments.rank_analysis`
=================================  ==================================================================================

The chapter: ``book/multihashformer.ipynb``; its experiments: :data:`~hashlib_core.papers.multihashformer.experiments.CHAPTER`
(``python -m hashlib_core.papers.multihashformer --profile cpu``); profiles:
:mod:`~hashlib_core.papers.multihashformer.profiles`; tables and figures of the page:
:mod:`~hashlib_core.papers.multihashformer.tables`, :mod:`~hashlib_core.papers.multihashformer.tables_scaling`,
:mod:`~hashlib_core.papers.multihashformer.figures`; the paper's claims with their computed verdicts (the last
experiment, ``claims``): :mod:`~hashlib_core.papers.multihashformer.claims` and
:mod:`~hashlib_core.papers.multihashformer.claims_scaling`.
"""
