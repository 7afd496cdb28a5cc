"""``python -m hashlib_core.papers.superbloom --profile P [--device D] [--only a,b] [--key=value ...]``."""
from hashlib_core.papers.superbloom.experiments import CHAPTER

if __name__ == "__main__":
    raise SystemExit(CHAPTER.main())
