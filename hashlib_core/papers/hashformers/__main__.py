"""``python -m hashlib_core.papers.hashformers --profile P [--device D] [--only a,b] [--key=value ...]``."""
from hashlib_core.papers.hashformers.experiments import CHAPTER

if __name__ == "__main__":
    raise SystemExit(CHAPTER.main())
