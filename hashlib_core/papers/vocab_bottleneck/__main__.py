"""``python -m hashlib_core.papers.vocab_bottleneck --profile P [--materialize_up_to=N]``."""
from hashlib_core.papers.vocab_bottleneck.experiments import CHAPTER

if __name__ == "__main__":
    raise SystemExit(CHAPTER.main())
