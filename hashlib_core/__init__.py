"""hashlib_core: the library behind the reproduction book for hash-based token embeddings.

Shared layers, one per concept:

- :mod:`hashlib_core.hashing` -- deterministic token hashers (keyed MD5, MMH3 multi-hash signatures, LSH) and the
  collision-free signature registry.
- :mod:`hashlib_core.embeddings` -- "token -> vector" modules built on those hashes, one protocol for all.
- :mod:`hashlib_core.decoding` -- scoring and sampling over multi-hash outputs; next-token scoring of any LM.
- :mod:`hashlib_core.modeling` -- the Hugging Face surface every model offers (hidden states, vocabulary
  log-probabilities, embedding parameter counts), so evaluation code never branches on the model type.
- :mod:`hashlib_core.data` -- dataset manifest and loaders (``datasets``), mirror / cache / download look-up.
- :mod:`hashlib_core.bpe` -- locally trained byte-level BPE tokenizers; :mod:`hashlib_core.glue` -- GLUE
  fine-tuning and metrics; :mod:`hashlib_core.glue_protocol` -- GLUE on the shared protocol (the held-out report
  set).
- :mod:`hashlib_core.protocol` -- one experimental protocol for every chapter: the learning-rate sweep on a selection
  split, seeds at the chosen rate, early stopping, reports on splits that chose nothing.
- :mod:`hashlib_core.pretraining` -- pre-training corpora (Penn Treebank, WikiText-2, 2015 Wikipedia) and objectives.
- :mod:`hashlib_core.profiles`, :mod:`hashlib_core.training`, :mod:`hashlib_core.params`,
  :mod:`hashlib_core.results` -- profiles (smoke / cpu / small / paper), the training loop, parameter accounting,
  results files and paper-vs-ours tables.
- :mod:`hashlib_core.chapter` -- the chapter skeleton; :mod:`hashlib_core.book` -- tables, figures and quoted numbers
  on a page; :mod:`hashlib_core.runner` -- the batch runner that executes the notebooks and builds the book.
- :mod:`hashlib_core.dry_run` -- the dry run of a profile (``--dry-run``): sizes against the paper, the real loaders
  with the hub mocked, two steps and a resume on two processes, the plan.

One package per paper: :mod:`hashlib_core.papers` (``hashlib_core.papers.<slug>``, the slug naming the notebook, the
results folder and the tests).
"""
__version__ = "0.1.0"

from hashlib_core import _import_noise as _noise  # noqa: E402  (torchao's CPU import log lines, see the module)

_noise.install()
