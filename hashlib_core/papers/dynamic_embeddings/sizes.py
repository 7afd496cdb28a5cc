"""Model sizes: EELBERT's "1.2 MB, 15x smaller than BERT-tiny" and the blog's napkin arithmetic, from configurations.

:func:`paper_sizes` builds every model of :data:`~hashlib_core.papers.dynamic_embeddings.profiles.PAPER_MODELS` at
BERT's vocabulary (30,522 WordPiece tokens, 512 positions, 2 token types, a pooler: ``BertModel``'s layout) on the
``meta`` device and counts its parameters: megabytes are 10^6 bytes, at 4 bytes per parameter (float32) and 1
(int8 weights, scales not counted). :func:`fitting_shapes` lists the BERT-like shapes of a dynamic model whose size
rounds to the abstract's 1.2 MB or whose ratio to BERT-tiny rounds to its 15x: the abstract gives no architecture,
so the chapter's one-layer UNO-EELBERT is an assumption, and this table shows which others the two numbers allow.
:func:`napkin` recomputes the blog's formulas (embedding matrix in float16,
divided by 1024 x 1024) from the configurations of the models it names, with the share of all weights.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.papers.dynamic_embeddings.modeling import DynamicBertConfig, DynamicBertModel
from hashlib_core.papers.dynamic_embeddings.profiles import PAPER_MODELS, DynamicEmbeddingsProfile, ModelSpec
from hashlib_core.params import count_parameters, embedding_breakdown, instantiate_on_meta
from hashlib_core.results import load_paper_table, parse_printed
from hashlib_core.results.paper import PrintedNumber

__all__ = ["BERT_VOCAB", "SHAPE_LAYERS", "SHAPE_WIDTHS", "STORAGE", "abstract_claims", "printed_claim", "paper_model",
           "paper_sizes", "fitting_shapes", "napkin"]

#: BERT's uncased WordPiece vocabulary (bert-base-uncased, BERT-tiny)
BERT_VOCAB = 30522
_MB = 1e6
#: The grid of shapes :func:`fitting_shapes` searches: layers, and widths in steps of 16 up to BERT-mini's 256 (the
#: feed-forward layer 4 d wide, as in every BERT; the count does not depend on the number of heads)
SHAPE_LAYERS = tuple(range(1, 13))
SHAPE_WIDTHS = tuple(range(16, 257, 16))
#: Bytes per weight of each storage the abstract's "MB" could mean
STORAGE = {"float32": 4, "float16": 2, "int8": 1}


def paper_model(spec: ModelSpec, profile: DynamicEmbeddingsProfile) -> DynamicBertModel:
    """``spec`` as BERT lays it out (30,522 tokens, 512 positions, 2 token types, pooler), on the meta device."""
    config = DynamicBertConfig(vocab_size=BERT_VOCAB, max_position_embeddings=512, type_vocab_size=2,
                               max_n=profile.max_n, projection=profile.projection, **spec.config_fields())
    return instantiate_on_meta(lambda: DynamicBertModel(config))


def paper_sizes(profile: DynamicEmbeddingsProfile) -> pd.DataFrame:
    """One row per paper-scale model: parameters, embedding-table parameters, megabytes and the ratio to BERT-tiny."""
    rows = []
    for spec in PAPER_MODELS:
        model = paper_model(spec, profile)
        total = count_parameters(model)
        rows.append({"model": spec.name, "embedding": spec.embedding, "layers": spec.layers, "hidden": spec.hidden,
                     "vocab_size": BERT_VOCAB, "total_params": total, "emb_params": model.embedding_parameter_count(),
                     "fp32_MB": 4 * total / _MB, "int8_MB": total / _MB, "note": spec.note})
    table = pd.DataFrame(rows)
    tiny = table.loc[table["model"] == "BERT-tiny", "total_params"].iloc[0]
    table["emb_share_%"] = 100.0 * table["emb_params"] / table["total_params"]
    table["BERT-tiny_over_model"] = tiny / table["total_params"]
    return table


def abstract_claims() -> pd.DataFrame:
    """The EELBERT abstract's claims (``data/paper_tables/eelbert_abstract.csv``), indexed by claim."""
    return load_paper_table("eelbert_abstract").set_index("claim")


def printed_claim(claim: str) -> PrintedNumber:
    """The number of an abstract claim as printed, without its unit or qualifier ("1.2 MB" -> 1.2, "15x" -> 15,
    "within 4%" -> 4%): its value and the rounding it was printed at."""
    text = abstract_claims().loc[claim, "value"]
    parsed = parse_printed(text.replace("MB", "").replace("within", "").rstrip("x").strip())
    if parsed is None:
        raise ValueError(f"the claim {claim!r} has no number")
    return parsed


def fitting_shapes(profile: DynamicEmbeddingsProfile) -> pd.DataFrame:
    """The dynamic-embedding shapes (``SHAPE_LAYERS`` x ``SHAPE_WIDTHS``, each stored as every ``STORAGE``) whose
    size in MB rounds to the abstract's "1.2 MB" or whose ratio to BERT-tiny (float32, at BERT's vocabulary) rounds
    to its "15x"; and the chapter's own UNO-EELBERT shape (float32), whether it fits or not (column ``ours``).

    A printed number stands for the values within half a unit of its last place (half of 0.1 MB either side of
    1.2 MB, half of 1 either side of 15x). Sorted by storage, layers and width."""
    size, ratio = printed_claim("UNO-EELBERT size"), printed_claim("UNO-EELBERT smaller than BERT-tiny")
    tiny_spec = next(m for m in PAPER_MODELS if m.name == "BERT-tiny")
    uno_spec = next(m for m in PAPER_MODELS if m.name == "UNO-EELBERT (ours)")
    tiny_bytes = STORAGE["float32"] * count_parameters(paper_model(tiny_spec, profile))

    def fits(value: float, printed) -> bool:
        return printed.value - printed.resolution <= value < printed.value + printed.resolution

    rows = []
    for layers in SHAPE_LAYERS:
        for width in SHAPE_WIDTHS:
            spec = ModelSpec("shape", "dynamic", layers, width, 1, 4 * width)
            params = count_parameters(paper_model(spec, profile))
            ours = (layers, width, 4 * width) == (uno_spec.layers, uno_spec.hidden, uno_spec.intermediate)
            for storage, nbytes in STORAGE.items():
                mb, times = params * nbytes / _MB, tiny_bytes / (params * nbytes)
                row = {"layers": layers, "hidden": width, "params": params, "storage": storage, "MB": mb,
                       "BERT-tiny_over_model": times, "fits_MB": fits(mb, size), "fits_ratio": fits(times, ratio),
                       "ours": ours and storage == "float32"}
                if row["fits_MB"] or row["fits_ratio"] or row["ours"]:
                    rows.append(row)
    order = {s: i for i, s in enumerate(STORAGE)}
    table = pd.DataFrame(rows)
    return table.sort_values(["storage", "layers", "hidden"], key=lambda c: c.map(order) if c.name == "storage"
                             else c, kind="stable").reset_index(drop=True)


def _blog_models() -> list[tuple[str, object]]:
    from hashlib_core.model_shapes import MODEL_SPECS

    wanted = {"GPT-2": "GPT2", "Mistral-7B": "Mistral 7B", "BERT-base": "BERT-base"}
    return [(wanted[s.name], s.build) for s in MODEL_SPECS if s.name in wanted]


def napkin() -> pd.DataFrame:
    """The blog's formula ``d x V x 2 / 1024^2`` (float16 MiB) and the embedding's share of all weights, for the
    models the blog names (and BERT-tiny, whose share is what the blog's "88%" matches), from their configurations."""
    from hashlib_core.papers.dynamic_embeddings.profiles import MODELS

    builds = _blog_models() + [("BERT-tiny", lambda: paper_model(MODELS[0], DynamicEmbeddingsProfile()))]
    rows = []
    for name, build in builds:
        b = embedding_breakdown(instantiate_on_meta(build))
        rows.append({"model": name, "vocab_size": b.vocab_size, "hidden_size": b.hidden_size, "tied_head": b.tied,
                     "total_params": b.total, "input_embedding_params": b.input_embedding,
                     "embedding_fp16_MiB": 2 * b.input_embedding / 2**20, "model_fp16_MiB": 2 * b.total / 2**20,
                     "model_fp16_GiB": 2 * b.total / 2**30,
                     "input_embedding_share_%": 100.0 * b.input_share,
                     "vocabulary_share_%": 100.0 * b.vocabulary_share})
    return pd.DataFrame(rows)
