"""``python -m hashlib_core.papers.pnlp_mixer --profile P [--device D] [--only a,b] [--key=value ...]``."""
from hashlib_core.papers.pnlp_mixer.experiments import CHAPTER

if __name__ == "__main__":
    raise SystemExit(CHAPTER.main())
