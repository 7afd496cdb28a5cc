"""``python -m hashlib_core.papers.families --profile P [--only ...]``."""
from hashlib_core.papers.families.experiments import CHAPTER

if __name__ == "__main__":
    raise SystemExit(CHAPTER.main())
