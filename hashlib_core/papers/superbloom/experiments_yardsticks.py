"""The Superbloom chapter's no-training measurements of its id sets (experiment ``yardsticks``).

On the main set, every other set and the coarseness diagnosis's set:

* ``yardsticks``: the popularity and co-occurrence rankings' recall on the test segments
  (:mod:`~hashlib_core.papers.superbloom.yardsticks`);
* ``yardsticks_hashed``: both through the hash maps of the Superbloom models trained on the set
  (:mod:`~hashlib_core.papers.superbloom.yardsticks_hashed`): at the profile's ``alpha`` on the main and other sets,
  at each of ``alphas`` on the diagnosis's; with the maps of each of the ``seeds`` on the main set at ``alpha`` (its
  claims' rows have that many), of ``seed`` elsewhere (the diagnosis trains one seed);
* ``set_shapes``: what a training step of ``batch`` segments holds on each set.

Each set is loaded and counted once.
"""
from __future__ import annotations

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.training import Resources
from hashlib_core.papers.superbloom.yardsticks import counts_of, shape_rows, yardstick_rows
from hashlib_core.papers.superbloom.yardsticks_hashed import hashed_yardstick_rows

__all__ = ["yardsticks_experiment"]


def yardsticks_experiment(ctx: RunContext) -> dict:
    """The experiment's three outputs (module docstring)."""
    p = ctx.profile
    names = list(dict.fromkeys([p.dataset, *p.other_datasets, *([p.alpha_dataset] if p.alpha_dataset else [])]))
    loaded: dict[str, tuple] = {}

    def resources(name: str) -> Resources:
        if name not in loaded:
            res = Resources(ctx, name)
            loaded[name] = (res, counts_of(res))
        return loaded[name][0]

    def counts(name: str):
        resources(name)
        return loaded[name][1]

    def alphas(name: str) -> tuple[int, ...]:
        return tuple(dict.fromkeys([*(p.alphas if name == p.alpha_dataset else ()),
                                    *((p.alpha,) if name in (p.dataset, *p.other_datasets) else ())]))

    def seeds(name: str, alpha: int) -> tuple[int, ...]:
        return tuple(range(p.seed, p.seed + (p.seeds if name == p.dataset and alpha == p.alpha else 1)))

    return {"yardsticks": yardstick_rows(names, resources, p.recall_at, counts),
            "yardsticks_hashed": hashed_yardstick_rows(names, resources, p.recall_at, alphas, seeds, p.num_hashes,
                                                       counts),
            "set_shapes": shape_rows(names, resources, p.batch)}
