"""The every-family chapter on fixed inputs: profiles, the run plan, data helpers, backbones, memories' sizing,
tables, figures and the claims' effects."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from hashlib_core.embeddings import catalogue  # noqa: E402
from hashlib_core.embeddings.catalogue import FAMILIES, minimum_budget  # noqa: E402
from hashlib_core.papers.families import claims, figures, tables  # noqa: E402
from hashlib_core.papers.families.data import collate, frequency_deciles, typo_texts  # noqa: E402
from hashlib_core.papers.families.modeling import (FamilyBertConfig, FamilyBertForSequenceClassification,  # noqa: E402
                                                   MemoryCausalLM, _memory, body_parameter_count, build_memory)
from hashlib_core.papers.families.profiles import PROFILES, FamiliesProfile  # noqa: E402
from hashlib_core.papers.families.track_a import pack, plan, settings, skipped, unpack  # noqa: E402
from hashlib_core.papers.families.track_b import pack_floats, unpack_floats  # noqa: E402

@pytest.fixture(autouse=True)
def _close_figures():
    yield
    matplotlib.pyplot.close("all")


STRINGS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "##s", "on", "mat", "play", "played", "##ing"]


# ------------------------------------------------------------------------------------------------- profiles, plan
def test_profiles_refuse_settings_that_cannot_run():
    with pytest.raises(ValueError, match="unknown families"):
        FamiliesProfile(families=("full", "nope"))
    with pytest.raises(ValueError, match="sweep_budget"):
        FamiliesProfile(budgets=(0.25,), sweep_budget=0.5, seeded_budgets=())
    with pytest.raises(ValueError, match="seeded_families"):
        FamiliesProfile(families=("full",), seeded_families=("bloom",))
    with pytest.raises(ValueError, match="distinct"):
        PROFILES.get("cpu", **{"sst2_protocol.learning_rates": "1e-3,1e-3"})
    with pytest.raises(ValueError, match="seeded_smallest"):
        FamiliesProfile(families=("full",), seeded_smallest=("md5-emb",))
    # a task's protocol selects and reports on that task's parts, never one part for both
    with pytest.raises(ValueError, match="sst2_protocol selects on"):
        PROFILES.get("cpu", **{"sst2_protocol.select_on": "dev", "sst2_protocol.report_on": "report"})
    with pytest.raises(ValueError, match="also the selection split"):
        PROFILES.get("cpu", **{"massive_protocol.report_on": "validation"})
    with pytest.raises(ValueError, match="no protocol"):
        PROFILES.get("cpu").protocol("rte")


def test_plan_sweeps_each_family_once_and_seeds_what_the_claims_read():
    p = PROFILES.get("cpu")
    steps = plan(p)
    by = {(s.family, s.fraction): (swept, seeds) for s, swept, seeds in steps}
    budget_families = [f for f in p.families if catalogue.FAMILIES[f].sizing == "budget"]
    assert len(steps) == len(budget_families) * len(p.budgets) + len(p.families) - len(budget_families)
    assert sum(swept for _, swept, _ in steps) == len(p.families)            # one sweep per family
    assert by[("full", 1.0)] == (True, [0, 1, 2])
    assert by[("md5-emb", p.sweep_budget)] == (True, [0, 1, 2])              # read by a claim: three seeds
    assert by[("bloom", p.sweep_budget)] == (True, [0])                      # not read by a claim: one seed
    assert by[("md5-emb", min(p.budgets))] == (False, [0, 1, 2])             # seeded_smallest: a claim reads it
    assert by[("lsh-emb", min(p.budgets))] == (False, [0])
    assert by[("md5-proj", p.sweep_budget)] == (True, [0, 1, 2])             # a fixed family: its one size
    rates, seeds_n = len(p.sst2_protocol.learning_rates), len(p.sst2_protocol.seeds)
    runs = sum(rates + len(seeds) - 1 if swept else len(seeds) for _, swept, seeds in steps)
    # every family swept, every budget family at its other budgets, the claimed families' other seeds (and the
    # seeded_smallest families' at the smallest budget)
    assert runs == (len(p.families) * rates + len(budget_families) * (len(p.budgets) - 1)
                    + (len(p.seeded_families) + len(p.seeded_smallest)) * (seeds_n - 1))
    # each task's seeds are its protocol's
    fewer = p.override(**{"massive_protocol.seeds": "4,5"})
    assert by == {(s.family, s.fraction): (sw, se) for s, sw, se in plan(fewer, task="sst2")}
    assert dict(((s.family, s.fraction), se) for s, _, se in plan(fewer, task="massive"))[("full", 1.0)] == [4, 5]
    # with the vocabulary's size, what a budget cannot build is left out (the gated signatures at the smallest)
    vocab = 30522
    assert skipped(p, vocab) == [type(steps[0][0])("gated-signatures", min(p.budgets))]
    assert len(plan(p, vocab)) == len(steps) - 1
    every = PROFILES.get("small")
    assert all(seeds == list(every.sst2_protocol.seeds) for _, _, seeds in plan(every))
    assert {s.fraction for s in settings(every) if s.family == "bloom"} == {1.0, 0.25, 0.0625, 0.016}


def test_the_sweep_parts_cover_every_family_once_claimed_first_the_rest_in_halves():
    from hashlib_core.papers.families.experiments import CHAPTER
    from hashlib_core.papers.families.track_a import sweep_families

    p = PROFILES.get("cpu")
    claimed, rest, rest2 = (sweep_families(p, part) for part in ("claimed", "rest", "rest2"))
    assert claimed == [f for f in p.families if f in p.seeded_families]
    assert sorted(claimed + rest + rest2) == sorted(p.families)            # each family in exactly one part
    assert not set(claimed) & set(rest) and not set(rest) & set(rest2)
    assert len(rest) - len(rest2) in (0, 1)
    with pytest.raises(ValueError, match="part must be 'claimed', 'rest' or 'rest2'"):
        sweep_families(p, "rest3")
    # every family seeded: one part, and the rest's experiments do not run
    every = PROFILES.get("small")
    assert sweep_families(every, "claimed") == list(every.families) and not sweep_families(every, "rest2")
    assert not CHAPTER.experiments["replace_sst2_sweep_rest2"].enabled(every)
    assert CHAPTER.experiments["replace_sst2_sweep_rest2"].enabled(p)


def test_massive_trains_only_its_families_where_the_profile_names_them():
    from hashlib_core.papers.families.experiments import CHAPTER
    from hashlib_core.papers.families.track_a import plan, sweep_families, task_families

    cpu = PROFILES.get("cpu")
    assert task_families(cpu, "massive") == [f for f in cpu.families if f in cpu.massive_families]
    assert task_families(cpu, "sst2") == task_families(cpu) == list(cpu.families)
    assert sweep_families(cpu, "claimed", "massive") == task_families(cpu, "massive")
    assert not sweep_families(cpu, "rest", "massive") and not sweep_families(cpu, "rest2", "massive")
    assert sweep_families(cpu, "rest", "sst2") and sweep_families(cpu, "rest2", "sst2")
    for name in ("replace_massive_sweep_rest", "replace_massive_sweep_rest2"):
        assert not CHAPTER.experiments[name].enabled(cpu)
    for name in ("replace_sst2_sweep_rest", "replace_sst2_sweep_rest2", "replace_massive_sweep", "replace_massive"):
        assert CHAPTER.experiments[name].enabled(cpu)
    assert {s.family for s, _, _ in plan(cpu, 30522, "massive")} == set(cpu.massive_families)
    assert {s.family for s, _, _ in plan(cpu, 30522, "sst2")} == set(cpu.families)
    # SST-2's results do not depend on the setting; MASSIVE's do
    assert "massive_families" in CHAPTER.experiments["replace_sst2"].independent_of
    assert "massive_families" not in CHAPTER.experiments["replace_massive"].independent_of
    with pytest.raises(ValueError, match=r"massive_families \('full', 'bloom'\) must be among the families"):
        PROFILES.get("smoke").override(families=("full", "md5-emb"), massive_families=("full", "bloom"))


def test_track_bs_sweep_parts_cover_every_memory_once_in_halves():
    from hashlib_core.papers.families.experiments import CHAPTER
    from hashlib_core.papers.families.track_b import memory_parts

    for name in ("smoke", "cpu", "small", "paper"):
        p = PROFILES.get(name)
        first, rest = memory_parts(p, "first"), memory_parts(p, "rest")
        assert first + rest == list(p.memories) and len(first) - len(rest) in (0, 1)
    one = PROFILES.get("cpu").override(memories=("none",))
    assert memory_parts(one, "first") == ["none"] and memory_parts(one, "rest") == []
    assert not CHAPTER.experiments["add_sweep_rest"].enabled(one) and CHAPTER.experiments["add_sweep"].enabled(one)
    assert set(CHAPTER.experiments["add"].reads) == {"lm_sweep", "lm_sweep_curves", "lm_sweep_rest",
                                                      "lm_sweep_rest_curves"}
    with pytest.raises(ValueError, match="part must be 'first' or 'rest'"):
        memory_parts(one, "second")


# ------------------------------------------------------------------------------------------------- data helpers
def test_typos_edit_each_long_word_once_and_only_at_the_rate():
    texts = ["the quick brown fox jumps over a lazy dog", "play it again"]
    assert typo_texts(texts, 0.0) == texts
    noisy = typo_texts(texts, 1.0, seed=3)
    assert noisy == typo_texts(texts, 1.0, seed=3)                            # one fixed stream
    for clean, dirty in zip(texts, noisy):
        for a, b in zip(clean.split(" "), dirty.split(" ")):
            if len(a) >= 3:
                assert a != b and abs(len(a) - len(b)) <= 1
            else:
                assert a == b                                                 # short words are kept
    with pytest.raises(ValueError, match="rate"):
        typo_texts(texts, 1.5)


def test_frequency_deciles_are_ten_equal_groups_rarest_first():
    counts = np.zeros(2000, dtype=np.int64)
    counts[1000:1020] = np.arange(20) * 10
    items = [[101, 1000 + i, 102] for i in range(20)]                           # ids < 1000 are BERT's specials
    deciles = frequency_deciles(items, counts)
    assert np.array_equal(np.bincount(deciles)[1:], [2] * 10)
    assert deciles[0] == 1 and deciles[-1] == 10
    assert np.all(np.diff(deciles) >= 0)                                        # rarer piece, lower decile
    counts[999] = 5                                                              # "!" is a piece, not a special
    assert frequency_deciles([[101, 102], [101, 999, 102]], counts).tolist() == [0, 1]   # no piece: no decile


def test_collate_pads_with_zero_and_masks():
    batch = collate([([2, 5, 3], 1), ([2, 3], 0)])
    assert batch["input_ids"].tolist() == [[2, 5, 3], [2, 3, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert batch["labels"].tolist() == [1, 0]


def test_pack_round_trips():
    bits = np.array([True, False, True, True, False, False, False, True, True])
    assert np.array_equal(unpack(pack(bits), len(bits)), bits)
    values = np.array([1.5, 2.25, 1e-3])
    assert np.allclose(unpack_floats(pack_floats(values)), values)


# ------------------------------------------------------------------------------------------------- backbones
def _config(family: str, budget: int, seed: int = 0) -> FamilyBertConfig:
    return FamilyBertConfig(family=family, budget=budget, family_seed=seed, vocab_tokens=STRINGS, hidden_size=8,
                            num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
                            max_position_embeddings=16, num_labels=3)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_family_shares_one_backbone_and_reloads(family, tmp_path):
    """Every family of the catalogue (not a sample: superbloom's reload once failed on the meta device)."""
    torch.manual_seed(0)
    budget = max(8 * 120, minimum_budget(family, len(STRINGS), 8)) if family != "full" else 8 * 120
    model = FamilyBertForSequenceClassification(_config(family, budget)).eval()
    control = FamilyBertForSequenceClassification(_config("full", 8 * len(STRINGS)))
    def outside_the_table(m):
        return sum(p.numel() for n, p in m.named_parameters() if not n.startswith("bert.embeddings.word_embeddings."))
    assert outside_the_table(model) == outside_the_table(control)          # only the embedding differs
    words = model.bert.embeddings.word_embeddings
    expected = words.weight.numel() if family == "full" else words.embedding_parameter_count()
    assert model.embedding_parameter_count() == expected
    assert sum(p.numel() for p in model.parameters()) == expected + body_parameter_count(model)
    ids = torch.tensor([[2, 4, 5, 6, 3], [2, 10, 11, 3, 0]])
    model.save_pretrained(tmp_path)
    again = FamilyBertForSequenceClassification.from_pretrained(tmp_path).eval()
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, again(input_ids=ids).logits)


def test_a_hashing_family_needs_the_vocabulary():
    with pytest.raises(ValueError, match="vocab_tokens"):
        FamilyBertForSequenceClassification(FamilyBertConfig(family="bloom", budget=64, hidden_size=8,
                                                             num_hidden_layers=1, num_attention_heads=2))
    with pytest.raises(ValueError, match="unknown family"):
        FamilyBertConfig(family="nope")


@pytest.mark.parametrize("name", ["blt", "over-encoding", "engram", "bigram", "bigram-residual"])
def test_memories_take_the_most_rows_within_the_budget(name):
    budget = 6000
    memory = build_memory(name, STRINGS, 8, budget)
    count = memory.embedding_parameter_count()
    assert count <= budget
    size = {"blt": lambda m: m.max_hash, "over-encoding": lambda m: m.modulus, "engram": lambda m: m.rows,
            "bigram": lambda m: m.buckets, "bigram-residual": lambda m: m.buckets}[name](memory)
    bigger = _memory(name, STRINGS, 8, size + 1).embedding_parameter_count()
    assert bigger > budget or bigger == count                                    # one more row no longer fits
    lm = MemoryCausalLM(_gpt2(), memory)
    ids = torch.tensor([[1, 4, 5, 6], [7, 8, 9, 10]])
    out = lm(input_ids=ids, labels=ids)
    assert out.logits.shape == (2, 4, len(STRINGS)) and torch.isfinite(out.loss)
    assert lm.memory_parameter_count() == count
    assert lm.embedding_parameter_count() == len(STRINGS) * 8 + count


def _gpt2(layers: int = 1):
    from transformers import GPT2Config

    return GPT2Config(vocab_size=len(STRINGS), n_positions=8, n_embd=8, n_layer=layers, n_head=2)


def test_the_residual_bigram_is_added_before_every_block_and_starts_as_no_memory():
    """The speedrun form: a full-width table, zero at start (the model is then exactly the control), its rows
    added before block i scaled by lambdas[i]; the same model computed by hand, block by block, agrees."""
    from hashlib_core.embeddings.memories import ResidualBigramEmbedding, bigram_hash_ids

    config = _gpt2(layers=2)
    torch.manual_seed(0)
    control = MemoryCausalLM(config, None).eval()
    memory = build_memory("bigram-residual", STRINGS, 8, 20 * 8 + 2, layers=2)
    assert isinstance(memory, ResidualBigramEmbedding) and memory.buckets == 20
    assert memory.embedding_parameter_count() == 20 * 8 + 2 and memory.lambdas.tolist() == pytest.approx([0.1, 0.1])
    model = MemoryCausalLM(config, memory).eval()
    model.lm.load_state_dict(control.lm.state_dict())
    ids = torch.tensor([[1, 4, 5, 6, 7], [7, 8, 9, 10, 11]])
    assert torch.equal(model(input_ids=ids).logits, control(input_ids=ids).logits)
    with torch.no_grad():
        memory.table.weight.normal_()
        memory.lambdas.copy_(torch.tensor([0.5, -2.0]))
        t = model.lm.transformer
        rows = memory.table(bigram_hash_ids(ids, 20))
        h = t.wte(ids) + t.wpe(torch.arange(ids.shape[1]))
        for block, scale in zip(t.h, memory.lambdas):
            out = block(h + scale * rows)
            h = out[0] if isinstance(out, tuple) else out
        by_hand = model.lm.lm_head(t.ln_f(h))
    assert torch.allclose(model(input_ids=ids).logits, by_hand, atol=1e-5)
    assert not torch.allclose(by_hand, control(input_ids=ids).logits)
    # no hook is left behind: the control path of the same backbone is unchanged after a forward
    assert all(not block._forward_pre_hooks for block in t.h)
    with pytest.raises(ValueError, match="build it with layers=2"):
        MemoryCausalLM(config, build_memory("bigram-residual", STRINGS, 8, 200, layers=1))


def test_memories_refuse_what_cannot_be_built():
    assert build_memory("none", STRINGS, 8, 10) is None
    with pytest.raises(ValueError, match="unknown memory"):
        build_memory("trigram", STRINGS, 8, 1000)
    with pytest.raises(ValueError, match="raise the budget"):
        build_memory("engram", STRINGS, 8, 10)


# ------------------------------------------------------------------------------------------------- tables, claims
def _runs() -> pd.DataFrame:
    rows = []
    n = 40
    rng = np.random.default_rng(0)
    spec = (("full", "full", 1.0, 1000, 0.8, 3), ("md5-emb", "budget", 0.0625, 60, 0.7, 3),
            ("lsh-emb", "budget", 0.0625, 60, 0.5, 3), ("md5-emb", "budget", 0.016, 16, 0.4, 1),
            ("md5-proj", "fixed", 0.0625, 12, 0.6, 3))
    for family, sizing, fraction, params, p, seeds in spec:
        for seed in range(seeds):
            correct = rng.random(n) < p
            rows.append({"task": "sst2", "family": family, "sizing": sizing, "fraction": fraction,
                         "emb_params": params, "body_params": 100, "learning_rate": 1e-3, "seed": seed,
                         "accuracy": 100 * correct.mean(), "typo_accuracy": 100 * correct.mean() - 5,
                         "heldout_accuracy": 50.0, "n_items": n, "converged": seed != 1, "chosen": True,
                         "best_step": 10,
                         "bytes_int8_zlib": params, "lookup_bytes": 4, "correct": pack(correct),
                         "typo_correct": pack(correct)})
    return pd.DataFrame(rows)


def test_summary_intervals_and_the_front():
    table = tables.summary(_runs())
    row = table.set_index(["family", "fraction"])
    three = row.loc[("md5-emb", 0.0625)]
    assert three["seeds"] == 3 and three["low"] < three["accuracy"] < three["high"] and three["capped"] == 1
    one = row.loc[("md5-emb", 0.016)]
    assert one["seeds"] == 1 and one["low"] < one["accuracy"] < one["high"]   # Wilson over the 40 items
    assert row.loc[("full", 1.0), "stored_bytes"] == 1004
    front = tables.pareto_front(table)
    assert list(front["emb_params"]) == sorted(front["emb_params"])
    assert front["accuracy"].is_monotonic_increasing
    assert "lsh-emb" not in set(front["family"])                                # md5-emb beats it at equal size


class _Evidence:
    def __init__(self, runs, profile):
        self._runs, self.profile = runs, profile

    def table(self, name):
        assert name == "runs"
        return self._runs

    def has(self, name):
        return name == "runs"


def test_claim_effects_read_the_chosen_runs():
    p = FamiliesProfile(tasks=("sst2",), budgets=(0.0625, 0.016), sweep_budget=0.0625, seeded_budgets=(0.0625,))
    ev = _Evidence(_runs(), p)
    runs = _runs()
    gap = claims.family_gap("sst2", "md5-emb", "lsh-emb", lambda q: q.sweep_budget)(ev)
    a = runs[(runs.family == "md5-emb") & (runs.fraction == 0.0625)]["accuracy"].mean()
    b = runs[(runs.family == "lsh-emb")]["accuracy"].mean()
    assert gap.interval.estimate == pytest.approx(a - b) and gap.unit == "points"
    small = claims.family_gap("sst2", "md5-proj", "md5-emb", lambda q: None, lambda q: min(q.budgets))(ev)
    c = runs[runs.family == "md5-proj"]["accuracy"].mean()
    d = runs[(runs.family == "md5-emb") & (runs.fraction == 0.016)]["accuracy"].mean()
    assert small.interval.estimate == pytest.approx(c - d)
    from hashlib_core.claims import NotTestable

    with pytest.raises(NotTestable, match="no chosen run"):
        claims.family_gap("sst2", "superbloom", "lsh-emb", lambda q: q.sweep_budget)(ev)
    with pytest.raises(NotTestable, match="not trained"):
        claims.family_gap("massive", "md5-emb", "lsh-emb", lambda q: q.sweep_budget)(ev)


def _swept(runs: pd.DataFrame, family: str, rates: list[float], chosen: float, extended: int = 0) -> pd.DataFrame:
    """``runs`` with ``family``'s seed-0 run at the sweep budget repeated at every rate of its sweep (the last
    ``extended`` of them added beyond the grid), ``chosen`` marked."""
    base = runs[(runs.family == family) & (runs.seed == 0) & np.isclose(runs.fraction, 0.0625)].iloc[0]
    others = runs.drop(base.name)
    extra = [{**base.to_dict(), "learning_rate": r, "chosen": r == chosen, "swept": True,
              "extended": i >= len(rates) - extended, "heldout_accuracy": 50.0 + i} for i, r in enumerate(rates)]
    if "swept" not in others:
        others = others.assign(swept=False, extended=False)
    return pd.concat([others, pd.DataFrame(extra)], ignore_index=True)


def test_a_family_whose_rate_is_still_at_an_end_of_its_sweep_is_flagged_in_the_claims_and_the_sweep_table():
    from hashlib_core.papers.families.track_a import rate_edges

    runs = _swept(_swept(_runs(), "md5-emb", [3e-4, 1e-3, 3e-3, 9e-3], 9e-3, extended=1), "lsh-emb",
                  [3e-4, 1e-3, 3e-3], 1e-3)
    edges = rate_edges(runs).set_index("family")
    assert edges.loc["md5-emb", "at_edge"] and edges.loc["md5-emb", "extended"] == 1
    assert not edges.loc["lsh-emb", "at_edge"] and edges.loc["lsh-emb", "rates"] == [3e-4, 1e-3, 3e-3]
    assert "full" not in edges.index                                 # one rate: no sweep, no edge
    p = FamiliesProfile(tasks=("sst2",), budgets=(0.0625, 0.016), sweep_budget=0.0625, seeded_budgets=(0.0625,))
    gap = claims.family_gap("sst2", "md5-emb", "lsh-emb", lambda q: q.sweep_budget)(_Evidence(runs, p))
    assert "rate-edge" in gap.flags and "md5-emb" in gap.note and "lsh-emb" not in gap.note.split("rate of")[-1]
    inner = _swept(_runs(), "md5-emb", [3e-4, 1e-3, 3e-3, 9e-3], 3e-3, extended=1)
    gap = claims.family_gap("sst2", "md5-emb", "lsh-emb", lambda q: q.sweep_budget)(_Evidence(inner, p))
    assert "rate-edge" not in gap.flags
    table = tables.sweep(runs).set_index("family")
    assert table.loc["md5-emb", "at edge"] == "yes" and table.loc["lsh-emb", "at edge"] == ""
    assert table.loc["md5-emb", "lr 0.009"] == 53.0 and np.isnan(table.loc["lsh-emb", "lr 0.009"])


def test_memories_table_is_the_paired_difference_from_the_control():
    bits_none = np.array([10.0, 12.0, 8.0, 9.0])
    rows = [{"memory": "none", "multiple": 0.0, "window_bits": pack_floats(bits_none)},
            {"memory": "blt", "multiple": 1.0, "window_bits": pack_floats(bits_none - 1.0)}]
    lm = pd.DataFrame([{**r, "memory_params": 5, "total_params": 50, "learning_rate": 1e-3, "chosen": True,
                        "converged": True, "test_bytes": 20.0} for r in rows])
    windows = pd.DataFrame({"window": [0, 1, 2, 3], "bytes": [4.0, 6.0, 5.0, 5.0]})
    out = tables.memories(lm, windows).set_index("memory")
    assert out.loc["none", "test_bpb"] == pytest.approx(39 / 20)
    assert out.loc["blt", "vs_control"] == pytest.approx(-4 / 20) and out.loc["blt", "high"] < 0
    fig = figures.memories_figure(out.reset_index())
    assert len(fig.axes) == 1
    with pytest.raises(ValueError, match="control"):
        tables.memories(lm[lm["memory"] != "none"], windows)


def test_figures_draw_every_family_and_the_front():
    table = tables.summary(_runs())
    fig = figures.quality_against(table, "emb_params")
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert set(table["family"]) <= set(labels) and "Pareto front" in labels
    speed = pd.DataFrame({"family": ["full", "md5-emb", "lsh-emb", "md5-proj"], "tokens_per_s": [4.0, 3.0, 2.0, 1.0]})
    fig = figures.quality_against(table, "tokens_per_s", speed, at=0.0625)
    drawn = set(fig.axes[0].get_legend_handles_labels()[1])
    assert drawn == {"full", "md5-emb", "lsh-emb", "md5-proj", "Pareto front"}
    with pytest.raises(ValueError, match="throughput table"):
        figures.quality_against(table, "tokens_per_s")


def test_gated_signatures_refuse_a_budget_below_their_fixed_parts():
    with pytest.raises(ValueError, match="raise the budget"):                   # not a negative bucket count
        catalogue.build("gated-signatures", STRINGS, 80, 8)


def test_a_plan_refuses_a_family_it_cannot_sweep():
    p = FamiliesProfile(families=("full", "gated-signatures"), budgets=(0.016,), sweep_budget=0.016,
                        seeded_budgets=())
    with pytest.raises(ValueError, match="cannot be built at the sweep budget"):
        plan(p, 30522)


def test_not_built_lists_the_settings_no_task_trained():
    p = FamiliesProfile(families=("full", "md5-emb", "md5-proj"), budgets=(0.0625, 0.016), sweep_budget=0.0625,
                        seeded_budgets=(0.0625,))
    runs = _runs()
    assert tables.not_built(runs, p) == []
    assert tables.not_built(runs[runs["fraction"] != 0.016], p) == [("md5-emb", 0.016)]


def test_the_second_stage_trains_at_each_familys_chosen_rate(monkeypatch):
    """sweep_task sweeps each family through the protocol; finish_task reads the chosen rate from the sweep's runs
    and trains every other (setting, seed) at it."""
    from types import SimpleNamespace

    from hashlib_core.papers.families import track_a
    from hashlib_core.papers.families.data import TaskData
    from hashlib_core.protocol import Trained

    p = FamiliesProfile(families=("full", "bloom"), budgets=(0.25, 0.0625), sweep_budget=0.0625,
                        seeded_budgets=(0.0625,)).override(**{"sst2_protocol.seeds": "0,1",
                                                              "sst2_protocol.learning_rates": "1e-3,3e-3",
                                                              "sst2_protocol.extend_edges": "1"})
    data = TaskData("sst2", {"report": ([[2, 1000, 3]], np.array([0]))}, {"report": ["a sentence"]}, 2)
    res = SimpleNamespace(vocab=STRINGS * 2000, tokenizer=lambda texts, **_: {"input_ids": [[2, 3]] * len(texts)},
                          task=lambda name: data)
    calls = []
    held_out = {("full", 1e-3): 0.5, ("full", 3e-3): 0.7, ("bloom", 1e-3): 0.6, ("bloom", 3e-3): 0.6}   # a tie

    def fake_train_one(ctx, res, data, s, typo_ids):
        def one(lr, seed):
            calls.append((s.family, s.fraction, lr, seed))
            row = {"task": "sst2", "family": s.family, "fraction": s.fraction, "learning_rate": lr, "seed": seed}
            return Trained(held_out.get((s.family, lr), 0.0), 10, 20, False,
                           {"report": np.ones(1), "dev": np.ones(1)}, {"row": row, "curve": []})
        return one

    monkeypatch.setattr(track_a, "_train_one", fake_train_one)
    ctx = SimpleNamespace(resources=res, profile=p)
    swept = track_a.sweep_task(ctx, "sst2")
    # each best rate is at an end of the two, so the sweep tries one beyond it (scored 0 here: the choice stays)
    assert sorted(calls) == sorted([("full", 1.0, 1e-3, 0), ("full", 1.0, 3e-3, 0), ("full", 1.0, 9e-3, 0),
                                    ("bloom", 0.0625, 1e-3, 0), ("bloom", 0.0625, 3e-3, 0),
                                    ("bloom", 0.0625, float(f"{1e-3 / 3:.12g}"), 0)])
    runs = swept["runs"]
    chosen = runs[runs["chosen"]].set_index("family")["learning_rate"]
    assert chosen["full"] == 3e-3 and chosen["bloom"] == 1e-3                 # a tie goes to the smaller rate
    assert runs["extended"].sum() == 2 and runs["swept"].all()
    assert not track_a.rate_edges(runs)["at_edge"].any()
    calls.clear()
    out = track_a.finish_task(ctx, "sst2", runs, swept["curves"])
    assert sorted(calls) == sorted([("full", 1.0, 3e-3, 1), ("bloom", 0.0625, 1e-3, 1), ("bloom", 0.25, 1e-3, 0)])
    assert len(out["runs"]) == len(runs) + 3 and out["runs"]["chosen"].sum() == 2 + 3
    with pytest.raises(RuntimeError, match="run the sweep first"):
        track_a.finish_task(ctx, "sst2", runs[runs["family"] != "bloom"], swept["curves"])
    # in two parts: the other seeds of the swept settings, then the other budgets merged with everything before
    calls.clear()
    seeds = track_a.finish_task(ctx, "sst2", runs, swept["curves"], "seeds")
    assert sorted(calls) == sorted([("full", 1.0, 3e-3, 1), ("bloom", 0.0625, 1e-3, 1)]) and len(seeds["runs"]) == 2
    calls.clear()
    rest = track_a.finish_task(ctx, "sst2", pd.concat([runs, seeds["runs"]], ignore_index=True), swept["curves"],
                               "rest")
    assert calls == [("bloom", 0.25, 1e-3, 0)]
    def ordered(table):
        return table.sort_values(["family", "fraction", "learning_rate", "seed"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(ordered(rest["runs"]), ordered(out["runs"]))     # the same runs as in one part
    with pytest.raises(ValueError, match="part must be 'all', 'seeds' or 'rest'"):
        track_a.finish_task(ctx, "sst2", runs, swept["curves"], "budgets")


def test_quoted_reads_every_task_and_says_which_did_not_run():
    p = FamiliesProfile(families=("full", "md5-emb", "lsh-emb", "md5-proj"), budgets=(0.0625, 0.016),
                        sweep_budget=0.0625, seeded_budgets=(0.0625,), tasks=("sst2",))
    runs = _runs()
    bits = np.array([10.0, 12.0])
    lm = pd.DataFrame([{"memory": m, "multiple": k, "window_bits": pack_floats(bits - d), "memory_params": 5,
                        "total_params": 50, "learning_rate": 1e-3, "chosen": True, "converged": True, "seed": 0,
                        "test_bpb": float((bits - d).sum()) / 10.0, "test_bytes": 10.0}
                       for m, k, d in (("none", 0.0, 0.0), ("blt", 1.0, 1.0))])
    windows = pd.DataFrame({"window": [0, 1], "bytes": [5.0, 5.0]})
    collisions = pd.DataFrame({"family": ["md5-emb"], "fraction": [0.0625], "emb_params": [60], "tokens": [100],
                               "colliding": [30], "expected": [20.0], "code_space": [50.0]})
    speed = pd.DataFrame({"family": ["full", "md5-emb"], "sizing": ["full", "budget"], "parameters": [1000, 60],
                          "build_s": [0.1, 0.5], "tokens_per_s": [100.0, 50.0], "lookup_bytes": [0, 8]})
    majority = pd.DataFrame({"task": ["sst2"], "heldout_majority": [40.0], "report_majority": [51.0]})
    q = tables.quoted(tables.summary(runs), runs, lm, windows, collisions, speed, p, majority)
    assert q["replace_sst2"].startswith("On SST-2 the full table reaches")
    assert "md5-emb" in q["replace_sst2"] and q["replace_massive"].startswith("MASSIVE EN is not trained")
    assert q["fastest"].startswith("full") and q["slowest_build"].startswith("md5-emb")
    assert q["memories_helping"] == "blt at 1x" and q["most_colliding"].startswith("md5-emb at 6.25%")
    assert q["stuck"] == "none" and q["majority"] == "SST-2 40.0% held out, 51.0% report"
    # Track B's ordering (lower first) and the pairs the page reads (none of them trained here)
    assert q["lm_order"] == "blt (2.000), none (2.200); seeds per memory: 1" and q["lm_pairs"].startswith("no pair")
    # the seeds of the fixture's settings: md5-emb at the sweep budget spreads the most
    spread = tables.seed_spread(runs)
    assert set(spread["family"]) == {"full", "md5-emb", "lsh-emb", "md5-proj"}
    widest = spread.loc[spread["spread"].idxmax()]
    assert q["seed_spread"] == f"{widest['spread']:.1f} points at most ({widest['family']} on SST-2)"
    assert q["budget_note"] == "The smoke profile keeps to three hours."
    assert q["massive_families"] == "every family"
    two = tables.quoted(tables.summary(runs), runs, lm, windows, collisions, speed,
                        p.override(massive_families=("md5-emb", "full")), majority)
    assert two["massive_families"] == "only 2 families, those the claims read (full, md5-emb)"
    assert PROFILES.get("cpu").budget_minutes > 180 and "five hours" in FamiliesProfile.BUDGET_NOTE
    # Track B's tuning: swept where the protocol has several rates, one fixed rate and an equal-steps comparison
    # where it has one; the runs still improving at the cap counted
    assert q["lm_tuning"].startswith("It is swept like Track A's families, under its own protocol (0.001, 0.003, 0.01")
    assert q["lm_tuning"].endswith("Every one of its 2 runs stopped on its own plateau before the cap")
    one = p.override(**{"lm_protocol.learning_rates": "3e-3", "lm_protocol.max_steps": "2000"})
    capped = tables.quoted(tables.summary(runs), runs, lm.assign(converged=[False, True]), windows, collisions, speed,
                           one, majority)["lm_tuning"]
    assert capped.startswith("Every memory trains alike, at one learning rate fixed in advance (0.003) for at most "
                             "2,000 steps") and capped.endswith("1 of its 2 runs were still improving when they "
                                                                "reached the cap")


def test_stuck_runs_are_those_near_the_majority_share():
    from hashlib_core.papers.families.data import TaskData
    from hashlib_core.papers.families.track_a import majority_shares

    data = TaskData("sst2", {"heldout": ([[1]] * 4, np.array([1, 1, 1, 0])), "report": ([[1]] * 2, np.array([0, 1])),
                             "dev": ([[1]] * 3, np.array([1, 1, 1]))}, {}, 2)
    proto = PROFILES.get("cpu").sst2_protocol
    assert majority_shares(data, proto) == {"heldout_majority": 75.0, "report_majority": 50.0}
    assert majority_shares(data, proto.override(report_on=("dev", "report")))["report_majority"] == 100.0
    runs = _runs().assign(heldout_accuracy=[50.0] * 3 + [79.0] + [90.0] * (len(_runs()) - 4))
    majority = pd.DataFrame({"task": ["sst2"], "heldout_majority": [75.0], "report_majority": [50.0]})
    caught = tables.stuck(runs, majority)
    assert list(caught["heldout_accuracy"]) == [50.0] * 3 + [79.0]


def test_a_runs_checkpoint_digest_reads_only_what_changes_its_weights():
    from hashlib_core.papers.families import track_a, track_b

    cpu = PROFILES.get("cpu")
    for names in (track_a.run_settings("sst2"), track_a.run_settings("massive"), track_b.RUN_SETTINGS):
        assert set(names) <= set(cpu.weight_settings())
    # which runs a profile makes (tasks, families, rates, seeds) and the other track's settings leave a run's digest
    other = cpu.override(tasks=("massive",), families=("full", "bloom"), budgets=(0.0625,), seeded_budgets=(),
                         seeded_families=(), seeded_smallest=(), massive_families=(), lm_hidden=32, memories=("none",),
                         **{"sst2_protocol.learning_rates": "1e-3", "sst2_protocol.seeds": "5",
                            "lm_protocol.seeds": "4"})
    for task in ("sst2", "massive"):
        assert other.weight_settings(track_a.run_settings(task)) == cpu.weight_settings(track_a.run_settings(task))
    assert other.override(hidden=32, heads=2).weight_settings(track_a.run_settings("sst2")) != \
        cpu.weight_settings(track_a.run_settings("sst2"))
    # a task's cap is in its own runs' digests only
    longer = cpu.override(**{"massive_protocol.max_steps": 7})
    assert longer.weight_settings(track_a.run_settings("sst2")) == cpu.weight_settings(track_a.run_settings("sst2"))
    assert longer.weight_settings(track_a.run_settings("massive")) != \
        cpu.weight_settings(track_a.run_settings("massive"))
    assert cpu.override(hidden=32).weight_settings(track_b.RUN_SETTINGS) == cpu.weight_settings(track_b.RUN_SETTINGS)
    assert cpu.override(**{"lm_protocol.max_steps": 7}).weight_settings(track_b.RUN_SETTINGS) != \
        cpu.weight_settings(track_b.RUN_SETTINGS)


def test_each_task_has_its_own_protocol_and_only_its_parts_read_it():
    from hashlib_core.papers.families.experiments import CHAPTER

    cpu = PROFILES.get("cpu")
    assert cpu.protocol("massive").learning_rates != cpu.protocol("sst2").learning_rates
    assert cpu.protocol("sst2").select_on == "heldout" and cpu.protocol("sst2").report_on == ("report", "dev")
    assert cpu.protocol("lm") is cpu.lm_protocol
    with pytest.raises(ValueError, match="protocol.max_steps must be an int >= 1"):
        cpu.override(**{"massive_protocol.max_steps": -1})
    massive = {"massive_protocol." + k for k in ("learning_rates", "seeds", "max_steps", "patience")}
    sst2 = {"sst2_protocol.max_steps", "sst2_report", "sst2_heldout"}
    for name in ("replace_sst2_sweep", "replace_sst2_seeds", "replace_sst2", "collisions", "throughput", "add_sweep",
                 "add_sweep_rest",
                 "add"):
        assert massive <= CHAPTER.experiments[name].independent_of
    for name in ("replace_massive_sweep", "replace_massive_seeds", "replace_massive", "collisions", "throughput",
                 "add_sweep", "add_sweep_rest",
                 "add"):
        assert sst2 <= CHAPTER.experiments[name].independent_of
    for name in ("replace_massive_sweep", "replace_massive_seeds", "replace_massive", "replace", "claims"):
        assert not massive & CHAPTER.experiments[name].independent_of
    lm = {"lm_protocol.max_steps", "lm_protocol.seeds"}
    for name in ("replace_sst2_sweep", "replace_massive", "replace", "collisions", "throughput"):
        assert lm <= CHAPTER.experiments[name].independent_of
    for name in ("add_sweep", "add_sweep_rest", "add"):
        assert not lm & CHAPTER.experiments[name].independent_of
    # the batching changes Track A's weights only: Track B, the collisions and the throughput stay current
    for name in ("collisions", "throughput", "add_sweep", "add_sweep_rest",
                 "add"):
        assert "length_group" in CHAPTER.experiments[name].independent_of
    for name in ("replace_sst2_sweep", "replace_sst2", "replace_massive_sweep", "replace_massive", "replace"):
        assert "length_group" not in CHAPTER.experiments[name].independent_of


def test_the_catalogue_table_marks_the_families_a_profile_does_not_train():
    from hashlib_core.embeddings.catalogue import FAMILIES

    smoke, cpu = PROFILES.get("smoke"), PROFILES.get("cpu")
    left_out = [f for f in FAMILIES if f not in smoke.families]
    assert left_out and "full" not in left_out
    table = tables.catalogue(smoke)
    assert table.loc[table["in smoke"] == "not yet", "family"].tolist() == left_out
    assert set(table.loc[table["in smoke"] == "yes", "family"]) == set(smoke.families)
    assert tables.untrained(smoke) == ", ".join(left_out)
    assert set(cpu.families) == set(FAMILIES) and tables.untrained(cpu) == "none"
    assert set(tables.catalogue(cpu)["in cpu"]) == {"yes"}
    assert "in cpu" not in tables.catalogue().columns and "in smoke" not in tables.catalogue().columns


def test_eval_limit_scores_a_seeded_sample_of_the_held_out_and_report_items(mirror):
    """``eval_limit`` keeps a seeded sample (in file order) of MASSIVE's validation and test items and of SST-2's
    dev items; 0 keeps every item, and the held-out size the floor rule reads follows it."""
    from hashlib_core.papers.families.data import _sample, _texts_labels, heldout_size

    texts, labels = [f"t{i}" for i in range(10)], list(range(10))
    part = _sample((texts, labels), 4, seed=0)
    assert len(part[0]) == 4 and part[1] == sorted(part[1]) and [f"t{i}" for i in part[1]] == part[0]
    assert _sample((texts, labels), 4, seed=0) == part and _sample((texts, labels), 0, seed=0) == (texts, labels)
    raw, _ = _texts_labels("massive", 100, 1000, 0, eval_limit=50)
    assert len(raw["validation"][0]) == len(raw["test"][0]) == 50 and len(raw["train"][0]) == 100
    full, _ = _texts_labels("massive", 100, 1000, 0)
    assert len(full["test"][0]) > 50
    sst, _ = _texts_labels("sst2", 100, 64, 0, eval_limit=50, report=200)
    assert len(sst["dev"][0]) == 50 and len(sst["heldout"][0]) == 64 and len(sst["report"][0]) == 200
    # SST-2's three parts of its training split share no text (a repeated phrase stays out of training)
    whole, _ = _texts_labels("sst2", 0, 64, 0, report=200)
    assert not set(whole["train"][0]) & (set(whole["heldout"][0]) | set(whole["report"][0]))
    assert whole["report"] == sst["report"] and whole["heldout"] == sst["heldout"]
    with pytest.raises(ValueError, match="leaves none to train on"):
        _texts_labels("sst2", 0, 60000, 0, report=10000)
    assert heldout_size("massive", FamiliesProfile(eval_limit=50)) == 50
    assert heldout_size("massive", FamiliesProfile()) == len(full["validation"][0])
    with pytest.raises(ValueError, match="eval_limit must be 0"):
        FamiliesProfile(eval_limit=1)


def test_a_family_or_memory_whose_code_changed_gets_new_checkpoints(monkeypatch):
    """The checkpoint digest covers each family's and memory's code version: version 1 adds nothing (unchanged
    families keep their checkpoints), a raised version changes the digest, so a changed family retrains."""
    from hashlib_core.papers.families import modeling
    from hashlib_core.training import config_digest

    assert catalogue.code_version("bloom") == () and catalogue.code_version("t-free") == ("v2",)
    assert modeling.memory_version("bigram") == () and modeling.memory_version("engram") == ("v2",)
    before = config_digest(("sst2", "bloom", 0.1, *catalogue.code_version("bloom")))
    monkeypatch.setitem(catalogue.VERSIONS, "bloom", 2)
    assert config_digest(("sst2", "bloom", 0.1, *catalogue.code_version("bloom"))) != before
    with pytest.raises(KeyError, match="unknown family"):
        catalogue.code_version("nope")
    with pytest.raises(ValueError, match="unknown memory"):
        modeling.memory_version("nope")


def test_track_b_orders_memories_per_seed_and_resamples_windows_and_seeds_together():
    """memory_seeds ranks each memory under each seed; memory_gap and memories read (seeds, windows) scores whose
    mean is bits per byte, so a gap is exact on the whole sample and its interval widens when seeds disagree."""
    windows = pd.DataFrame({"window": [0, 1, 2, 3], "bytes": [10.0, 10.0, 20.0, 20.0]})
    base = np.array([10.0, 12.0, 20.0, 18.0])

    def run(memory, seed, shift, multiple=1.0):
        bits = base - shift
        return {"memory": memory, "multiple": 0.0 if memory == "none" else multiple, "seed": seed, "chosen": True,
                "window_bits": pack_floats(bits), "test_bpb": float(bits.sum()) / 60.0, "memory_params": 5,
                "total_params": 50, "learning_rate": 1e-3, "converged": True}

    lm = pd.DataFrame([run("none", s, 0.0) for s in (0, 1)] + [run("engram", s, 1.0) for s in (0, 1)]
                      + [run("bigram-residual", 0, 2.0), run("bigram-residual", 1, 0.5)]
                      + [run("bigram-residual", 0, 3.0, multiple=4.0)])
    order = tables.memory_seeds(lm)
    assert list(order["memory"]) == ["bigram-residual", "engram", "none"]      # the 4x run is not in the order
    assert list(order["ranks"]) == ["1 2", "2 1", "3 3"]
    assert order["mean"].iloc[0] == pytest.approx((base.sum() - 8 + base.sum() - 2) / 2 / 60)
    gap = tables.memory_gap(lm, windows, "bigram-residual", "engram")
    assert gap["gap"] == pytest.approx(((base.sum() - 8 + base.sum() - 2) / 2 - (base.sum() - 4)) / 60)
    assert gap["seeds"] == (2, 2) and gap["low"] < gap["gap"] < gap["high"]
    same = tables.memory_gap(lm, windows, "engram", "none")      # both models' seeds agree: a fixed shift
    assert same["gap"] == pytest.approx(-4 / 60) and same["low"] == pytest.approx(same["high"])
    table = tables.memories(lm, windows).set_index(["memory", "multiple"])
    assert table.loc[("engram", 1.0), "vs_control"] == pytest.approx(-4 / 60)
    assert table.loc[("none", 0.0), "test_bpb"] == pytest.approx(base.sum() / 60)
    with pytest.raises(ValueError, match="no chosen run of memory 'blt'"):
        tables.memory_gap(lm, windows, "blt", "none")
