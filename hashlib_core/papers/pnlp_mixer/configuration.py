"""The configuration of pNLP-Mixer models (Fusco et al., ACL 2023 industry track), Hugging Face style.

Defaults are §4's model: 256 MinHash values per token in a counting Bloom filter of 512 counters, a bottleneck (one
dense layer, Leaky ReLU, LayerNorm) to ``hidden_size``, and 5 MLP-Mixer layers whose token-mixing and
channel-mixing MLPs are 256 wide, over sequences of 64 tokens. §4 says each block "contains 256 hidden dimensions for
the token-mixing, channel-mixing, and classification head"; we read the last as a one-hidden-layer head of width 256
(``classifier_hidden=0`` gives a linear head). ``hidden_size`` is not printed; 256 gives about one million
parameters, the size §4 aims at (counted in the tests).
"""
from __future__ import annotations

from transformers import PreTrainedConfig

from hashlib_core.hashing.base import check_positive_int

__all__ = ["ENCODERS", "PNLPMixerConfig"]

#: The encoders between the bottleneck and the head (§5.2, Table 2); built by
#: :func:`hashlib_core.papers.pnlp_mixer.alternatives.build_encoder`.
ENCODERS = ("projection-only", "cnn", "lstm", "transformer", "mixer")


class PNLPMixerConfig(PreTrainedConfig):
    """Fields of a pNLP-Mixer: the projection's sizes, the bottleneck, the mixer and the head.

    num_hashes / bloom_size:
        n MinHash values per token and m counters of its counting Bloom filter (§4: 256 and 512; the community code:
        64 and 1,024).
    window_size:
        w: each token's features are concatenated with those of its w neighbours on each side (the community code;
        the paper uses none, w = 0), so the bottleneck reads ``(2w + 1) m`` features.
    max_seq_len:
        s, the fixed number of token positions (token mixing is a dense layer over positions; shorter sentences
        are padded with all-zero features and masked).
    hidden_size, num_mixer_layers, token_mixing_dim, channel_mixing_dim:
        h (bottleneck output and mixer channels), the number of mixer blocks (§4: 5) and the widths of the two MLPs
        of each block (§4: 256 and 256).
    classifier_hidden:
        width of the head's hidden layer (0: a linear head).
    encoder:
        what reads the bottleneck's output (§5.2, Table 2): ``"mixer"`` (the pNLP-Mixer, default),
        ``"projection-only"``, ``"cnn"``, ``"lstm"`` or ``"transformer"``; see
        :mod:`hashlib_core.papers.pnlp_mixer.alternatives`. The mixer fields size only the mixer.
    """

    model_type = "pnlp_mixer"

    num_hashes: int = 256
    bloom_size: int = 512
    window_size: int = 0
    max_seq_len: int = 64
    hidden_size: int = 256
    num_mixer_layers: int = 5
    token_mixing_dim: int = 256
    channel_mixing_dim: int = 256
    classifier_hidden: int = 256
    encoder: str = "mixer"
    leaky_relu_slope: float = 0.01
    dropout: float = 0.0
    layer_norm_eps: float = 1e-5
    initializer_range: float = 0.02

    def __post_init__(self, **kwargs):
        for name in ("num_hashes", "bloom_size", "max_seq_len", "hidden_size", "num_mixer_layers",
                     "token_mixing_dim", "channel_mixing_dim"):
            setattr(self, name, check_positive_int(name, getattr(self, name), "PNLPMixerConfig"))
        for name in ("window_size", "classifier_hidden"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"PNLPMixerConfig: {name} must be an int >= 0, got {value!r:.40}")
        if self.encoder not in ENCODERS:
            raise ValueError(f"PNLPMixerConfig: encoder must be one of {', '.join(map(repr, ENCODERS))}, got "
                             f"{self.encoder!r:.40}")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"PNLPMixerConfig: dropout must lie in [0, 1), got {self.dropout!r}")
        super().__post_init__(**kwargs)

    @property
    def projection_features(self) -> int:
        """Features the bottleneck reads per position: ``(2w + 1) m``."""
        return (2 * self.window_size + 1) * self.bloom_size
