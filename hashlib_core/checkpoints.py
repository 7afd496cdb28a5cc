"""Checkpoint folders: who holds one (an exclusive lock that names its holder and gives up after a limit), which
checkpoint is the latest, and whether its files are what was saved.

:func:`hashlib_core.training.train` writes a checkpoint as ``Accelerator.save_state`` plus ``trainer_state.json``
(written last), which records each file's size and SHA-256; :func:`read_checkpoint_state` checks them before a
resume, so a checkpoint cut short or changed is refused by name (:class:`CheckpointError`) instead of failing deep
in torch or resuming with other random states.
"""
from __future__ import annotations

import json
import logging
import math
import os
import socket
import time
from pathlib import Path
from typing import Any

from hashlib_core._io import sha256_file

__all__ = ["STATE_FILE", "LOCK_TIMEOUT_S", "lock_timeout_s", "latest_checkpoint", "read_checkpoint_state",
           "CheckpointError", "file_digests", "read_saved_json"]

STATE_FILE = "trainer_state.json"
logger = logging.getLogger(__name__)


#: seconds a run waits for a checkpoint folder another process holds before it gives up (``HASHLIB_LOCK_TIMEOUT_S``
#: overrides it; the holder's training may take this long, so the default is generous)
LOCK_TIMEOUT_S = 24 * 3600.0
#: seconds between two tries on a held lock
_LOCK_POLL_S = 0.5


def lock_timeout_s() -> float:
    """The lock timeout in force: ``HASHLIB_LOCK_TIMEOUT_S`` when set (a positive number of seconds), else
    :data:`LOCK_TIMEOUT_S`."""
    raw = os.environ.get("HASHLIB_LOCK_TIMEOUT_S")
    if raw is None or raw.strip() == "":
        return LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"HASHLIB_LOCK_TIMEOUT_S must be a positive number of seconds, got {raw!r}; unset it for "
                         f"the default ({LOCK_TIMEOUT_S:g} s)")
    return value


def _holder(path: Path) -> str:
    """Who holds the lock, as its holder wrote it (pid, since when, and whether that process is stopped)."""
    try:
        info = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    pid = info.get("pid")
    if not isinstance(pid, int):
        return "another process (it wrote no pid)"
    state = ""
    try:      # Linux: the third field of /proc/<pid>/stat is the state; T / t: stopped (SIGSTOP) or traced
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        state = {"T": ", stopped (SIGSTOP: `kill -CONT` it or end it)", "t": ", stopped by a tracer",
                 "Z": ", a zombie"}.get(fields[0], "")
    except (OSError, IndexError):
        pass
    if info.get("host") == socket.gethostname():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:     # the file still names the last holder: the new one has not written yet
            return f"another process (the last one to write its name, pid {pid}, has ended)"
        except OSError:
            pass
    return f"pid {pid} on {info.get('host', '?')}{state}, since {info.get('since', '?')}"


def _lock(out: Path, timeout_s: float | None = None) -> Any:
    """An exclusive lock on ``out/.train.lock``, held until the returned file is closed.

    The holder writes its pid, host and start time into the file. A second process waits for it, says once whom
    it waits for (pid, since when, and whether that process is stopped), and gives up with ``TimeoutError`` after
    ``timeout_s`` (default :func:`lock_timeout_s`) instead of waiting for ever behind a stopped or hung holder."""
    import fcntl
    from datetime import datetime, timezone

    timeout_s = lock_timeout_s() if timeout_s is None else timeout_s
    out.mkdir(parents=True, exist_ok=True)
    path = out / ".train.lock"
    handle = open(path, "a+")
    began, told = time.monotonic(), False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as exc:
            if not isinstance(exc, BlockingIOError):       # not a held lock: a file system that refuses locks
                handle.close()
                raise OSError(f"cannot lock the checkpoint folder {out} ({exc}); train into a folder on a local "
                              f"file system") from exc
            waited = time.monotonic() - began
            if waited >= timeout_s:
                holder = _holder(path)
                handle.close()
                raise TimeoutError(
                    f"the checkpoint folder {out} is held by {holder}; waited {waited:.0f} s "
                    f"(HASHLIB_LOCK_TIMEOUT_S = {timeout_s:g}). End or resume that process, or train into another "
                    f"output folder, or raise HASHLIB_LOCK_TIMEOUT_S") from None
            if not told:
                logger.warning("waiting for the checkpoint folder %s: it is held by %s (giving up after %g s, "
                               "HASHLIB_LOCK_TIMEOUT_S)", out, _holder(path), timeout_s)
                told = True
            time.sleep(min(_LOCK_POLL_S, max(0.0, timeout_s - waited)))
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}))
    handle.flush()
    return handle


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The newest complete checkpoint under ``output_dir/checkpoints`` (one whose state file exists)."""
    root = Path(output_dir) / "checkpoints"
    if not root.is_dir():
        return None
    done = [p for p in root.glob("step_*") if (p / STATE_FILE).is_file()]
    return max(done, key=lambda p: int(p.name.split("_")[1])) if done else None


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be resumed from: a file missing, cut short or changed since it was saved."""


def file_digests(ckpt: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {"bytes", "sha256"}}`` of every file of a checkpoint but its state file."""
    out = {}
    for path in sorted(p for p in ckpt.rglob("*") if p.is_file() and p.name != STATE_FILE):
        digest = sha256_file(path)
        out[path.relative_to(ckpt).as_posix()] = {"bytes": path.stat().st_size, "sha256": digest}
    return out


def _damaged(ckpt: Path, what: str) -> CheckpointError:
    return CheckpointError(
        f"the checkpoint {ckpt} cannot be resumed from: {what}. Delete that folder to resume from the checkpoint "
        f"before it (or the whole {ckpt.parent} folder to train from scratch), or pass resume=False")


def read_checkpoint_state(ckpt: str | Path) -> dict[str, Any]:
    """The state file of checkpoint ``ckpt``, every file it lists checked against its recorded size and SHA-256.

    Raises :class:`CheckpointError` naming the checkpoint, the damaged file and what to do, for a state file that
    is not whole JSON, a listed file missing, shorter or longer than saved, or changed since. Checkpoints written
    before the digests were recorded (no ``files`` entry) are checked by loading: their RNG file must unpickle
    (accelerate would otherwise skip it without a word and resume with other random states)."""
    ckpt = Path(ckpt)
    try:
        state = json.loads((ckpt / STATE_FILE).read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _damaged(ckpt, f"its {STATE_FILE} does not read as JSON ({type(exc).__name__}: {exc}; cut short?)")
    missing = [k for k in ("step", "epoch", "batch_in_epoch", "losses") if k not in state] if isinstance(
        state, dict) else ["step"]
    if missing:
        raise _damaged(ckpt, f"its {STATE_FILE} lacks {', '.join(missing)}")
    for name, meta in (state.get("files") or {}).items():
        path = ckpt / name
        if not path.is_file():
            raise _damaged(ckpt, f"{name} is missing")
        size = path.stat().st_size
        if size != meta["bytes"]:
            raise _damaged(ckpt, f"{name} holds {size:,} bytes where {meta['bytes']:,} were saved (cut short "
                                 f"or overwritten)")
        if sha256_file(path) != meta["sha256"]:
            raise _damaged(ckpt, f"{name} changed since it was saved (its SHA-256 differs)")
    if not state.get("files"):
        from accelerate.utils import load as accelerate_load

        rng = sorted(ckpt.glob("random_states_*.pkl"))
        if not rng:
            raise _damaged(ckpt, "it holds no random_states_*.pkl (the RNG states the exact resume needs)")
        for path in rng:
            try:
                accelerate_load(path)
            except Exception as exc:     # an unpickling error of any kind: the file is damaged
                raise _damaged(ckpt, f"{path.name} does not load ({type(exc).__name__}: {exc}; cut short?)")
    return state


def read_saved_json(path: Path, what: str) -> dict[str, Any]:
    """A finished run's saved record (``what`` names it, e.g. "the outcome of a fine-tuning run"), or
    :class:`CheckpointError` naming the file and what to do when it is not whole JSON (cut short, overwritten)."""
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CheckpointError(f"{path} ({what}) does not read as JSON ({type(exc).__name__}: {exc}; cut short?). "
                              f"Delete it (or its folder {Path(path).parent}) and the run is done again") from None
    if not isinstance(saved, dict):
        raise CheckpointError(f"{path} ({what}) is not a JSON object. Delete it (or its folder "
                              f"{Path(path).parent}) and the run is done again")
    return saved
