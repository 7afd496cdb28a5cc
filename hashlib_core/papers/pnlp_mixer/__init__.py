"""pNLP-Mixer (Fusco, Pascual, Staar and Antognini, ACL 2023 industry track): an embedding-free MLP-Mixer.

Each token's subword units get MinHash fingerprints over their character trigrams; the token's fingerprint is the
element-wise minimum over its units (MinHash associativity), stored as a counting Bloom filter. A bottleneck and an
MLP-Mixer read these features; a model of about one million parameters (one megabyte in 8 bits) tags slots and
classifies intents.

Where each part of the paper is implemented (the chapter: ``book/pnlp_mixer.ipynb``; run it with
``python -m hashlib_core.papers.pnlp_mixer --profile P``):

==============================  ====================================================================================
§3.1, MinHash fingerprints      :class:`hashlib_core.hashing.minhash.MinHashFingerprinter`
§3.1, associativity and cache   :class:`hashlib_core.hashing.minhash.FingerprintCache`
§3.1, counting Bloom filter     :func:`hashlib_core.hashing.minhash.counting_bloom_filter`
§5.1, Binary, TSP, SimHash      :mod:`hashlib_core.hashing.projections` (one interface with MinHash)
§3.2, bottleneck and MLP-Mixer  :class:`~hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerModel`
§3.2, heads                     :mod:`~hashlib_core.papers.pnlp_mixer.heads`; both at once: :class:`~hashlib_core.papers.pnlp_mixer.joint.PNLPMixerForIntentAndSlots`
§4, model sizes                 :class:`~hashlib_core.papers.pnlp_mixer.configuration.PNLPMixerConfig`
§5.2, Table 2's encoders        :func:`~hashlib_core.papers.pnlp_mixer.alternatives.build_encoder` (``PNLPMixerConfig(encoder=...)``: projection-only, CNN, LSTM, transformer, mixer)
§4, inputs (mBERT WordPiece)    :class:`~hashlib_core.papers.pnlp_mixer.projection.SentenceProjector`
§4, data (ATIS, SNIPS, MTOP)    :mod:`~hashlib_core.papers.pnlp_mixer.data` (MTOP and MASSIVE in full from :mod:`hashlib_core.data`)
§4, training, early stopping    :func:`~hashlib_core.papers.pnlp_mixer.fit.fit` (on the shared loop)
§4, metrics                     :mod:`~hashlib_core.papers.pnlp_mixer.metrics` (intent accuracy, exact match, seqeval slot F1, the community's non-O accuracy)
Tables 1-4, 8-bit, latency      :mod:`~hashlib_core.papers.pnlp_mixer.experiments` (tuning and seeds: :mod:`~hashlib_core.papers.pnlp_mixer.runs`; Tables 1-2 in parts: :mod:`~hashlib_core.papers.pnlp_mixer.comparisons`), :mod:`~hashlib_core.papers.pnlp_mixer.quantization`, :mod:`hashlib_core.benchmarks.pnlp_mixer_latency`
§6, lean inference (latency)    :class:`~hashlib_core.papers.pnlp_mixer.inference.MixerForInference`
§1, cost against the length     :mod:`hashlib_core.benchmarks.pnlp_mixer_scaling` (Mixer and Transformer, 32-4,096)
Tables 1-2's MTOP EN at length  :mod:`~hashlib_core.papers.pnlp_mixer.longer` (the ``longer_mtop`` diagnosis: the Mixer and its best rival at a longer cap)
the claims and their verdicts   :mod:`~hashlib_core.papers.pnlp_mixer.claims` (the ``claims`` experiment, registered last; Tables 1-2's bootstraps: :mod:`~hashlib_core.papers.pnlp_mixer.claims_comparison`)
==============================  ====================================================================================
"""
