"""Results: files with their provenance (:mod:`~hashlib_core.results.store`) and paper numbers beside ours
(:mod:`~hashlib_core.results.paper`)."""
from hashlib_core.results.paper import (
    PrintedNumber,
    format_like,
    load_paper_table,
    paper_table_index,
    paper_tables_dir,
    paper_vs_ours,
    parse_printed,
)
from hashlib_core.results.store import (
    ResultsStore,
    collect_metadata,
    git_state,
    read_benchmark,
    repo_root,
    results_root,
    to_jsonable,
)

__all__ = [
    "repo_root", "results_root", "git_state", "collect_metadata", "to_jsonable", "ResultsStore", "PrintedNumber",
    "parse_printed", "format_like", "paper_tables_dir", "paper_table_index", "load_paper_table", "paper_vs_ours",
    "read_benchmark",
]
