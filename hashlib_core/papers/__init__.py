"""One package per paper: ``hashlib_core.papers.<slug>`` (the slug also names the notebook, the results folder and
the tests). Each package's ``__init__`` opens with the paper's summary and a map from every equation, table and
figure to the code that implements it; its ``experiments`` module defines the chapter (:class:`hashlib_core.chapter.Chapter`).
"""
from __future__ import annotations

import importlib

__all__ = ["CHAPTERS", "chapter"]

#: The chapters, in book order.
CHAPTERS = ("vocab_bottleneck", "hashformers", "superbloom", "multihashformer", "pnlp_mixer", "dynamic_embeddings",
            "families")


def chapter(slug: str):
    """The :class:`~hashlib_core.chapter.Chapter` of ``slug``."""
    if slug not in CHAPTERS:
        raise ValueError(f"unknown chapter {slug!r}; chapters: {', '.join(CHAPTERS)}")
    return importlib.import_module(f"hashlib_core.papers.{slug}.experiments").CHAPTER
