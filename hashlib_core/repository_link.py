"""The book's repository link and Colab/Binder launch buttons, written into the staged ``_config.yml``.

The URL is ``$BOOK_REPOSITORY_URL`` when set, else the checkout's ``origin`` remote when it is on GitHub (normalised
to https), else none: never guessed. ``$BOOK_REPOSITORY_BRANCH`` names the branch (default: the checkout's).
"""
from __future__ import annotations

import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import yaml

from hashlib_core.results import repo_root

__all__ = ["REPOSITORY_ENV", "BRANCH_ENV", "LAUNCH_BUTTONS", "github_https_url", "repository_url",
           "configure_repository", "write_staged_config"]

REPOSITORY_ENV = "BOOK_REPOSITORY_URL"
BRANCH_ENV = "BOOK_REPOSITORY_BRANCH"
LAUNCH_BUTTONS = {"notebook_interface": "classic", "binderhub_url": "https://mybinder.org",
                  "colab_url": "https://colab.research.google.com"}


_GITHUB = re.compile(
    r"^(?:(?:https?|git|ssh)://(?:[^@/]+@)?github\.com(?::\d+)?/|(?:[^@/:]+@)?github\.com:)"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def github_https_url(remote: str) -> str | None:
    """``https://github.com/<owner>/<repo>`` for an https or ssh GitHub remote (credentials dropped), else None."""
    match = _GITHUB.match(remote.strip())
    return f"https://github.com/{match['owner']}/{match['repo']}" if match else None


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def repository_url(root: Path | None = None) -> str | None:
    """The book's repository URL: ``$BOOK_REPOSITORY_URL`` if set, else the ``origin`` remote when it is on
    GitHub (normalised to https), else None. Never guessed."""
    value = os.environ.get(REPOSITORY_ENV, "").strip()
    if value:
        url = github_https_url(value)
        if url:
            return url
        parts = urllib.parse.urlsplit(value)
        if parts.scheme != "https" or not parts.hostname or parts.path.strip("/") == "":
            raise SystemExit(f"{REPOSITORY_ENV}={value!r} is not a repository URL: set it to "
                             "https://<host>/<owner>/<repo> (or a GitHub ssh address), or unset it")
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        return urllib.parse.urlunsplit(("https", host, parts.path.rstrip("/").removesuffix(".git"), "", ""))
    remote = _git(root or repo_root(), "remote", "get-url", "origin")
    return github_https_url(remote) if remote else None


def configure_repository(config: dict, url: str | None, branch: str, path_to_book: str) -> dict:
    """``config`` (a parsed ``_config.yml``) with the repository link and launch buttons, or without any."""
    html = config.setdefault("html", {}) or {}
    config["html"] = html
    if url is None:
        config.pop("repository", None)
        config.pop("launch_buttons", None)
        html.update(use_repository_button=False, use_issues_button=False, use_edit_page_button=False)
        return config
    config["repository"] = {"url": url, "branch": branch, "path_to_book": path_to_book}
    config["launch_buttons"] = dict(LAUNCH_BUTTONS)
    html["use_repository_button"] = True
    return config


def write_staged_config(stage: Path, root: Path) -> None:
    url = repository_url(root)
    branch = os.environ.get(BRANCH_ENV, "").strip() or _git(root, "rev-parse", "--abbrev-ref", "HEAD") or "main"
    branch = "main" if branch == "HEAD" else branch
    prefix = (_git(root, "rev-parse", "--show-prefix") or "").strip("/")
    path = stage / "_config.yml"
    config = configure_repository(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, url, branch, prefix)
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    if url is None:
        print(f"[runner] no repository link or Colab/Binder buttons: set {REPOSITORY_ENV}=https://github.com/"
              "<owner>/<repo> (or give the checkout a GitHub 'origin' remote) to add them", flush=True)
    else:
        print(f"[runner] repository link and launch buttons: {url} (branch {branch})", flush=True)
