"""pNLP-Mixer (Fusco, Pascual, Staar and Antognini, ACL 2023 industry track): an embedding-free MLP-Mixer.

Each token's subword units get MinHash fingerprints over their character trigrams; the token's fingerprint is the
element-wise minimum over its units (MinHash associativity), stored as a counting Bloom filter. A bottleneck and an
MLP-Mixer read these features; a model of about one million parameters (one megabyte in 8 bits) tags slots and
classifies intents.

Where each part of the paper is implemented (the chapter itself, its data pipeline, experiments and profiles are
not built yet; see the open pNLP-Mixer issue):

==============================  ====================================================================================
§3.1, MinHash fingerprints      :class:`hashlib_core.hashing.minhash.MinHashFingerprinter`
§3.1, associativity and cache   :class:`hashlib_core.hashing.minhash.FingerprintCache`
§3.1, counting Bloom filter     :func:`hashlib_core.hashing.minhash.counting_bloom_filter`
§3.2, bottleneck and MLP-Mixer  :class:`~hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerModel`
§3.2, heads                     :class:`~hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerForTokenClassification`, :class:`~hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerForSequenceClassification`
§4, model sizes                 :class:`~hashlib_core.papers.pnlp_mixer.configuration.PNLPMixerConfig`
§5.2, Table 2's encoders        :func:`~hashlib_core.papers.pnlp_mixer.alternatives.build_encoder` (``PNLPMixerConfig(encoder=...)``: projection-only, CNN, LSTM, transformer, mixer)
§4, inputs (mBERT WordPiece)    :class:`~hashlib_core.papers.pnlp_mixer.projection.SentenceProjector`
§4, metrics                     :mod:`~hashlib_core.papers.pnlp_mixer.metrics` (intent accuracy, exact match, the community's non-O accuracy)
==============================  ====================================================================================
"""
