"""The shape of the library: module sizes, no import cycles, model code free of results, one chapter skeleton, and
computed numbers never typed as literals."""
from __future__ import annotations

import ast
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, paper_table_index, parse_printed, repo_root

ROOT = repo_root()
PACKAGE = ROOT / "hashlib_core"
#: "No module over ~400 lines": the tolerance the "~" allows.
MAX_LINES = 430


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def _imports(path: Path, module: str) -> set[str]:
    """Every hashlib_core module ``module`` imports, at any depth of the file (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    modules = _modules()
    return {m for m in found if m in modules and m != module}


def test_no_module_is_over_about_400_lines():
    long = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_import_cycles():
    modules = _modules()
    graph = {m: _imports(p, m) for m, p in modules.items()}
    # a package's __init__ re-exporting its submodules is not a cycle with them
    for m in graph:
        graph[m] = {d for d in graph[m] if not (modules[d].name == "__init__.py" and m.startswith(d + "."))}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import cycles: {cycles[:5]}"


def test_model_code_never_imports_results():
    modules = _modules()
    model_code = [m for m in modules if m.startswith(("hashlib_core.embeddings", "hashlib_core.hashing",
                                                      "hashlib_core.decoding"))
                  or m.endswith((".modeling", ".configuration", ".presets", ".baselines"))]
    assert len(model_code) >= 15
    offenders = {m: sorted(d for d in _imports(modules[m], m) if d.startswith("hashlib_core.results"))
                 for m in model_code}
    assert not {m: d for m, d in offenders.items() if d}, offenders


def test_chapter_modules_define_no_run_write_or_cli_plumbing():
    """Every chapter is a Chapter with its experiments registered; none writes results or parses a command line."""
    from hashlib_core.chapter import Chapter
    from hashlib_core.papers import CHAPTERS, chapter

    for slug in CHAPTERS:
        ch = chapter(slug)
        assert isinstance(ch, Chapter) and ch.slug == slug and ch.experiments
        assert (ROOT / "book" / f"{slug}.ipynb").exists() and (ROOT / "tests" / slug).is_dir()
        for path in (PACKAGE / "papers" / slug).glob("*.py"):
            text = path.read_text()
            for forbidden in ("argparse", "ResultsStore(", "write_table(", "write_json(", "PartialState"):
                assert forbidden not in text, f"{path.relative_to(ROOT)} uses {forbidden}"


# ------------------------------------------------------------------------------------------------ typed numbers
#: Result columns that hold inputs (shapes, settings, sizes chosen by a profile), not computed numbers.
INPUT_COLUMNS = {
    "vocab_size", "hidden_size", "num_buckets", "num_hashes", "num_hidden_layers", "B", "B_paper", "H", "d",
    "seed", "steps", "contexts", "valid_vocab", "vocab_before", "vocab_after", "new_tokens", "rtol", "words",
    "train_examples", "dev_examples", "test_tokens", "train_sentences", "validation_sentences", "test_sentences",
    "intents", "pairs", "index", "size", "mix", "lsh", "mmh3", "repeats",
    "positions", "num_positions", "hidden_sizes", "vocab", "distinct_units", "buckets_used", "wall_time_s",
    # rank bounds are products of settings (H x d, + 1), not measurements: H4 at d = 256 gives 1,024, a round number
    "paper_bound", "bound_with_normaliser",
    # benchmark settings
    "chunk_size", "chunk_size_requested", "dims", "row_tile", "tokens", "torch_threads", "items", "n_tokens",
    "batch_shape", "repeats_per_run", "cpu_count", "scripts", "largest_tensor_bytes", "workers", "num_ids", "alpha",
    "tokens_per_map", "seq_len", "lengths",
    # Superbloom: settings and ids (vocabulary sizes of §4, the paper's page count, a test segment's target id)
    "bigrams", "unigrams", "wordpiece_pieces", "vocabulary", "train_windows", "#samples", "hash_tokens", "ids",
    "target", "label_frequency", "num_sampled", "num_ids",
    # the size of an id set (a property of the staged data, like a split's sentence count), a test segment's index
    # and how many ids its beam scored (per-item records for the paired bootstrap), the step cap a profile sets and
    # the evaluation step a run kept (a point on the profile's evaluation grid)
    "data_ids", "segment", "scored", "max_steps", "best_step",
    # the every-family chapter: a test window's index, the report split's size, a budget's fraction and multiple
    "window", "n_items", "fraction", "multiple",
    # the step a run read back from its checkpoint (a parallel run's whole run resumes each finished one)
    "resumed_from_step",
    # a trend point's pre-training length and a similarity test's pair count (profile settings), the size of a
    # pre-training corpus (staged data)
    "pt_steps", "corpus_tokens", "random_pairs",
    # MultiHashFormer's scaling curve and sweep: a backbone's shape, the seeds and held-out sentences a bootstrap
    # rests on, the CPT length and the validation split's size (settings and staged data)
    "ffn", "layers", "seeds", "sentences", "cpt_steps", "valid_tokens", "learning_rate",
}
#: per benchmark result: the sizes it builds at its own settings, not measurements (the families benchmark's budget,
#: parameters and the bytes a hash keeps are products of the vocabulary size, the width and each family's shape);
#: its timings stay checked
BENCHMARK_SIZE_COLUMNS = {"families": {"budget", "parameters", "lookup_bytes"},
                          # the claims benchmark's settings: how many resamples each path drew
                          "claims": {"resamples", "loop_resamples"}}
#: per committed result: parameter counts that are products of settings (MultiHashFormer's scaling curve: Standard's
#: embedding is V x d, and 2,048 x 32 = 2^16 met the 65,536 constants of the hashing code); the other columns stay
#: checked
_FAMILY_SIZES = {"emb_params", "budget", "bytes_fp32", "bytes_int8", "lookup_bytes", "parameters", "colliding",
                 "expected"}
#: sizes that are products of settings (a family's parameters at a budget of V x d, its bytes, a tokens count equal
#: to V when every piece collides), whose round values coincide with unrelated constants typed elsewhere
RESULT_SIZE_COLUMNS = {"scaling_runs": {"emb_params"},
                       **{stem: _FAMILY_SIZES for stem in ("runs", "sst2_runs", "sst2_sweep", "massive_runs",
                                                            "massive_sweep", "throughput", "collisions",
                                                            # the later parts of each stage, one experiment each
                                                            "sst2_sweep_rest", "sst2_sweep_rest2", "sst2_seeds",
                                                            "massive_sweep_rest", "massive_sweep_rest2",
                                                            "massive_seeds")}}


def _numbers(obj, column: str = "") -> list[float]:
    """Every numeric value in a result (a JSON tree or a table), skipping input columns."""
    if column in INPUT_COLUMNS:
        return []
    if isinstance(obj, bool) or obj is None:
        return []
    if isinstance(obj, (int, float)):
        return [] if isinstance(obj, float) and not math.isfinite(obj) else [float(obj)]
    if isinstance(obj, dict):
        return [v for k, x in obj.items() for v in _numbers(x, str(k))]
    if isinstance(obj, (list, tuple)):
        return [v for x in obj for v in _numbers(x, column)]
    if isinstance(obj, pd.DataFrame):
        return [v for c in obj.columns if pd.api.types.is_numeric_dtype(obj[c]) for v in _numbers(obj[c].tolist(), c)]
    return []


def _without(obj, keys: set[str]):
    """A JSON tree without the entries named ``keys`` (at any depth)."""
    if isinstance(obj, dict):
        return {k: _without(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [_without(v, keys) for v in obj]
    return obj


@lru_cache(maxsize=1)
def _computed_values() -> tuple[float, ...]:
    """Numbers our code computes: the parameter counts at the papers' scales, and every committed result."""
    import torch

    from hashlib_core.papers.hashformers.table2 import hashformers_table2
    from hashlib_core.papers.multihashformer import params

    values: list[float] = []
    with torch.no_grad():
        for table in (hashformers_table2(), params.multihashformer_table1_params(), params.table1_readings(),
                      params.fig3_embedding_params(), params.paper_scale_expansion_params()):
            values += _numbers(table)
    for path in (ROOT / "results").rglob("*"):
        # training curves hold thousands of per-step losses that no page quotes one by one
        if (path.parent.name == "smoke" or path.name.endswith(".meta.json") or path.stem.endswith("_curves")
                or path.stem == "curves"):
            continue
        if path.suffix == ".csv":
            values += _numbers(pd.read_csv(path).drop(columns=sorted(RESULT_SIZE_COLUMNS.get(path.stem, set())),
                                                      errors="ignore"))
        elif path.suffix == ".json":
            data = json.loads(path.read_text()).get("data")
            if path.relative_to(ROOT / "results").parts[0] == "benchmarks":
                data = _without(data, BENCHMARK_SIZE_COLUMNS.get(path.stem, set()))
            values += _numbers(data)
    return tuple(values)


@lru_cache(maxsize=1)
def _quoted_inputs() -> frozenset[str]:
    """Renderings that are the papers' printed numbers (quoting a paper is not typing our result): the transcribed
    tables' cells, and the numbers in the sentences the claims quote (checked word for word against the papers'
    texts by ``tests/core/test_claims.py``)."""
    import importlib

    from hashlib_core.papers import CHAPTERS

    printed = set()
    for slug in CHAPTERS:
        for claim in importlib.import_module(f"hashlib_core.papers.{slug}.claims").CLAIMS.claims:
            printed |= set(re.findall(r"\d[\d,]*(?:\.\d+)?[KMB]?", claim.quote))
    for stem in paper_table_index():
        for cell in load_paper_table(stem).to_numpy().ravel():
            try:
                number = parse_printed(cell)
            except ValueError:
                continue
            if number is not None:
                printed |= {str(cell).strip(), number.text.replace("%", "").strip()}
    return frozenset(printed)


def _significant(text: str) -> int:
    return len(re.sub(r"[^0-9]", "", text).lstrip("0"))


def _renderings(value: float) -> set[str]:
    """How a computed value would be typed: exact integers (with or without separators), K/M/B forms, decimals.
    Only renderings with at least three significant digits count (two when a ``%`` follows, see below): shorter
    ones collide with too many unrelated numbers."""
    out = set()
    if value.is_integer() and abs(value) >= 1000:
        out |= {f"{int(value)}", f"{int(value):,}"}
    if abs(value) >= 10_000:
        out |= {humanize(value, k) for k in (1, 2, 3)}
    if not value.is_integer():   # a rounding to a whole number ("60.0") reads as a setting, not as a result
        out |= {r for r in (f"{value:.2f}", f"{value:.3f}", f"{value:.1f}") if r.split(".")[1].strip("0")}
    return {r for r in out if _significant(r) >= 2}


def _texts() -> dict[str, str]:
    """What a literal could be typed into: the library's source and the book's prose (notebook markdown)."""
    texts = {str(p.relative_to(ROOT)): p.read_text() for p in PACKAGE.rglob("*.py")}
    for nb in (ROOT / "book").glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        texts[str(nb.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    texts["book/intro.md"] = (ROOT / "book" / "intro.md").read_text()
    return texts


def find_typed_numbers(texts: dict[str, str], values, quoted: frozenset[str]) -> list[tuple[str, str]]:
    """``(file, literal)`` for every rendering of a computed value that appears as a number in ``texts``."""
    renderings = {r for v in values for r in _renderings(v)} - quoted
    found = set()
    for name, text in texts.items():
        for match in re.finditer(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?[KMB]?)(?![\w])(%?)", text):
            token, percent = match.groups()
            if token in renderings and (_significant(token) >= 3 or percent):
                found.add((name, token))
    return sorted(found)


def test_the_typed_number_check_catches_a_typed_result():
    values = (12_582_912.0, 132_100_000.0, 0.9180)
    texts = {"a.py": "hashes 12,582,912 parameters (132.1M); PoEP 0.92%", "b.md": "a count of 12,582,913 and 0.92"}
    assert find_typed_numbers(texts, values, frozenset()) == [("a.py", "0.92"), ("a.py", "12,582,912"),
                                                              ("a.py", "132.1M")]
    assert find_typed_numbers(texts, values, frozenset({"132.1M", "0.92"})) == [("a.py", "12,582,912")]


def test_no_computed_number_is_typed_as_a_literal():
    found = find_typed_numbers(_texts(), _computed_values(), _quoted_inputs())
    assert not found, f"computed numbers typed as literals (read them from the results instead): {found}"
