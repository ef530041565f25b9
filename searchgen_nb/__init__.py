"""searchgen_nb: extraction, aggregation, validation and publication of SearchGen-Bench releases.

Every rule lives in this package (``../shared/SPEC.md`` is the contract); the notebooks in
``notebooks/`` only call into it.
"""

__version__ = "1.0.0"
