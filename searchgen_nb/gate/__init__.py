"""The release gate (data contract, § The release gate): recomputes a release folder from its
artifacts with its own code. ``checks.validate_folder`` runs the checks; ``records`` and
``columns`` read ``prompt_scores.jsonl``, ``aggregate`` and ``bootstrap`` recompute the
leaderboards and ``uncertainty.json``, ``compare`` sets them against the published ones;
``evidence``, ``losses`` and ``work`` are the evidence check, the guard against lost results and
the count of the work; ``report`` holds the result. It imports only what the contract allows
(``tests/test_gate_apart.py``)."""
