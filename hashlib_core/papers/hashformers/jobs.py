"""The HashFormers chapter as parallel jobs (:mod:`hashlib_core.parallel`): one job per model, then the whole run.

``python -m hashlib_core.parallel hashformers --profile small --device cuda`` runs, at once and each in its own
process sharing the checkpoint folder: every Table 1 model's pre-training and fine-tuning (its group's GLUE
experiment with ``--only_models=<name>``; ProFormer's fine-tuning alone), every Table 6 model's, the trend's two
models, the Add diagnosis per hash, and the experiments with no training (Table 2, the hashes) straight into the
results folder; BERT-MLM's job also runs the majority diagnosis (which reads that model's chosen learning rate). The
whole chapter run then reads every pre-training and fine-tuning back from the checkpoints, merges the groups, and
times Table 3 alone on the machine.
The claims are derived from the results alone (``--only claims``, anywhere).
"""
from __future__ import annotations

from hashlib_core.parallel import Job
from hashlib_core.papers.hashformers.experiments import CHAPTER, GLUE_PARTS
from hashlib_core.papers.hashformers.profiles import PROFORMER, TABLE6_MODELS, TREND_MODELS, HashFormersProfile

__all__ = ["CHAPTER", "parallel_jobs", "NO_TRAINING"]

#: experiments that train nothing: one job writes them to the final results folder
NO_TRAINING = ("table2", "hashes")


def _job_name(*parts: str) -> str:
    words = ("".join(c if c.isalnum() else " " for c in p).split() for p in parts)
    return "_".join("-".join(w).lower() for w in words)


def parallel_jobs(profile: HashFormersProfile) -> tuple[list[Job], list[str]]:
    """The jobs of ``profile`` (longest first: the Table 1 models, then the Add diagnosis, the trend and Table 6)
    and the arguments of the whole run that follows them."""
    part_of = {group: part for part, group in GLUE_PARTS.items()}
    majority = CHAPTER.experiments["majority"].enabled(profile)
    # the majority diagnosis reads BERT-MLM's chosen learning rate: it follows that model's fine-tuning in its job
    jobs = []
    for m in profile.selected():
        only = part_of[m.group] + (",majority" if majority and m.name == "BERT-MLM" else "")
        jobs.append(Job(_job_name(m.name), ("--only", only, f"--only_models={m.name}")))
    if CHAPTER.experiments["glue_proformer"].enabled(profile):
        jobs.append(Job(_job_name(PROFORMER.name), ("--only", "glue_proformer", f"--only_models={PROFORMER.name}")))

    jobs += [Job(_job_name("add", m.name), ("--only", "add_diagnosis", f"--only_models={m.name}"))
             for m in profile.selected() if m.embedding_type == "add"]
    if profile.trend_pt_steps:
        jobs += [Job(_job_name("trend", m.name), ("--only", "trend", f"--only_models={m.name}"))
                 for m in profile.selected(TREND_MODELS)]
    if profile.table6:
        jobs += [Job(_job_name("table6", m.name), ("--only", "table6", f"--only_models={m.name}"))
                 for m in profile.selected(TABLE6_MODELS)]
    jobs.append(Job("no-training", ("--only", ",".join(NO_TRAINING)), shared=True))
    final = [name for name, exp in CHAPTER.experiments.items()
             if name not in NO_TRAINING and name != "claims" and exp.enabled(profile)]
    return jobs, ["--only", ",".join(final)]
