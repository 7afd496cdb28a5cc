"""The one-line provenance a chapter page prints above its numbers: which results, computed where, when and how."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["results_banner"]

#: what each profile's models are, as the banner says it
PROFILE_MEANING = {"smoke": "tiny models that prove the code runs; its numbers are not meant to match the paper",
                   "cpu": "models sized for two CPU cores and at most three hours",
                   "small": "reduced-scale models on one GPU",
                   "paper": "the paper's hyper-parameters"}


def results_banner(slug: str, profile_name: str, metas: Sequence[Mapping[str, Any]], source: str) -> str:
    """Markdown naming the results shown (``source``: "committed" or "live"), from one metadata record per
    experiment (its outputs share the experiment's wall time and commit): the devices, torch, seed, commits, date
    and the experiments' total wall time."""
    if not metas:
        return f"**Results:** `{profile_name}` profile (no results file)."
    first = metas[0]
    minutes = sum(float(m.get("wall_time_s") or 0.0) for m in metas) / 60.0
    commits = list(dict.fromkeys(str(m.get("git_commit") or "unknown")[:10] for m in metas))
    commit = "`, `".join(commits)
    # every device the experiments ran on (a GPU run counts its parameters on the CPU), the accelerator first
    places = list(dict.fromkeys(
        f"{m.get('device')} ({m.get('device_name') or m.get('device')}"
        f"{', ' + str(m['cpu_capability']) if m.get('cpu_capability') else ''}"
        f"{', ' + str(m['cpu_count']) + ' cores' if m.get('cpu_count') else ''})"
        for m in sorted(metas, key=lambda m: str(m.get("device")) == "cpu")))
    what = PROFILE_MEANING[profile_name]
    if source == "committed":
        lead = (f"**Results shown:** the committed `{profile_name}` profile ({what}), "
                f"`results/{slug}/{profile_name}/`")
    else:
        lead = (f"**Results shown:** a live run of the `{profile_name}` profile ({what}); no committed results "
                f"were available")
    return (f"{lead}. Computed on {' and '.join(places)}, torch "
            f"{first.get('packages', {}).get('torch')}, seed {first.get('seed')}, "
            f"commit{'s' if len(commits) > 1 else ''} `{commit}`, "
            f"{first.get('created_utc', '')[:10]}; {minutes:.1f} minutes of experiments in all."
            f"{uncommitted_note(slug, profile_name, metas)}")


def uncommitted_note(slug: str, profile_name: str, metas: Sequence[Mapping[str, Any]]) -> str:
    """A warning sentence when some of ``metas`` ran from a tree with uncommitted changes (empty otherwise): how
    many, on which commits, which files differed and where the diff is kept (results written before the changes
    were recorded say that the change is unknown)."""
    dirty = [m for m in metas if m.get("git_dirty")]
    if not dirty:
        return ""
    files = sorted({f for m in dirty for f in (m.get("git_dirty_files") or [])})
    unknown = sum(1 for m in dirty if not m.get("git_diff_sha256"))
    kept = sorted({str(m["git_diff_sha256"])[:16] for m in dirty if m.get("git_diff_sha256")})
    commits = sorted({str(m.get("git_commit"))[:10] for m in dirty})
    parts = [f" **Not from a commit: {len(dirty)} of {len(metas)} experiments ran from a tree with uncommitted "
             f"changes** (on commit{'s' if len(commits) > 1 else ''} `{'`, `'.join(commits)}`), so their code is "
             f"in no commit"]
    if files:
        shown = ", ".join(f"`{f}`" for f in files[:6]) + (f" and {len(files) - 6} more" if len(files) > 6 else "")
        parts.append(f"; the changes touched {shown}, their diff kept as "
                     f"{', '.join(f'`results/{slug}/{profile_name}/patches/{k}.diff`' for k in kept)}")
    if unknown:
        parts.append(f"; {unknown} of them {'predates' if unknown == 1 else 'predate'} the recording of changes, which "
                     f"are unknown")
    return "".join(parts) + "."
