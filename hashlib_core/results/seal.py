"""Seal results written before their data digests were recorded: ``python -m hashlib_core.results.seal [ROOT]``.

A result's metadata records ``data_sha256`` when its run writes it (:mod:`hashlib_core.results.store`), and every
read checks it. Results written before that have no digest, so an edit to them would go unnoticed. Sealing records
the digest of each such result **as it is now** (for committed results: as committed), marked
``"data_sha256_recorded": "sealed <date>"`` rather than ``"written"``, so nobody mistakes it for the run's own record.
Sealing a JSON result rewrites its file (the digest lives in its ``meta``), which changes the file's own digest;
results derived from it that recorded the old digest as their evidence (``inputs``) are re-pointed to the new one,
so that sealing never makes a current result look stale. Results already sealed or written with a digest are left
alone; the run is idempotent.
"""
from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from hashlib_core._io import atomic_write_json, sha256_file
from hashlib_core.results.store import data_digest, results_root

__all__ = ["seal"]


def _load(path: Path):
    """A result file's JSON; a file that does not parse is refused by name (sealing would record its damage)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not whole JSON ({exc}): restore or recompute it before sealing") from None


def seal(root: str | Path | None = None, *, today: str | None = None) -> dict[str, int]:
    """Seal every result under ``root`` (default: the results root) that has no ``data_sha256``; return counts of
    the tables and JSON results sealed and of the evidence records re-pointed."""
    root = Path(root) if root is not None else results_root()
    stamp = f"sealed {today or datetime.now(timezone.utc).date().isoformat()}"
    counts = {"tables": 0, "json": 0, "inputs": 0}
    for folder in sorted(p for p in root.glob("*/*") if p.is_dir()):
        renamed: dict[str, tuple[str, str]] = {}       # result name -> (old file digest, new file digest)
        for meta_path in sorted(folder.glob("*.meta.json")):
            meta = _load(meta_path)
            csv_path = folder / (meta_path.name[: -len(".meta.json")] + ".csv")
            if not isinstance(meta, dict) or "data_sha256" in meta or not csv_path.exists():
                continue
            meta.update(data_sha256=sha256_file(csv_path), data_sha256_recorded=stamp)
            atomic_write_json(meta_path, meta)
            counts["tables"] += 1
        for path in sorted(folder.glob("*.json")):
            if path.name.endswith(".meta.json"):
                continue
            whole = _load(path)
            if not isinstance(whole, dict) or not isinstance(whole.get("meta"), dict) or "data" not in whole \
                    or "data_sha256" in whole["meta"]:
                continue
            before = sha256_file(path)
            whole["meta"].update(data_sha256=data_digest(whole["data"]), data_sha256_recorded=stamp)
            atomic_write_json(path, whole)
            renamed[path.stem] = (before, sha256_file(path))
            counts["json"] += 1
        # re-point the evidence records that named the old files; a JSON result re-pointed changes its own file, so
        # repeat until no record names a replaced digest (a chain A -> B -> C settles in as many passes)
        while renamed:
            rewritten: dict[str, tuple[str, str]] = {}
            for path in sorted(folder.glob("*.json")):
                whole = _load(path)
                if not isinstance(whole, dict):
                    continue
                meta = whole if path.name.endswith(".meta.json") else whole.get("meta")
                inputs = meta.get("inputs") if isinstance(meta, dict) else None
                if not isinstance(inputs, dict):
                    continue
                changed = {k: renamed[k][1] for k, v in inputs.items() if k in renamed and v == renamed[k][0]}
                if not changed:
                    continue
                before = sha256_file(path)
                inputs.update(changed)
                atomic_write_json(path, whole)
                counts["inputs"] += len(changed)
                if not path.name.endswith(".meta.json"):
                    rewritten[path.stem] = (before, sha256_file(path))
            renamed = rewritten
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=None, help="results folder (default: the results root)")
    args = parser.parse_args(argv)
    root = Path(args.root) if args.root else None
    if root is not None and not root.is_dir():
        parser.error(f"{root} is not a folder of results")
    print(json.dumps(seal(root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
