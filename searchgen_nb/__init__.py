"""searchgen_nb: extraction, aggregation, validation and publication of SearchGen-Bench releases.
Every rule lives in this package (``docs/data-contract.md`` is the contract); the notebooks in
``notebooks/`` only call into it."""


def _version() -> str:
    """The version written once, in pyproject.toml: from the installed metadata, or (a source
    tree that was never installed) from the pyproject.toml beside the package."""
    from importlib import metadata

    try:
        return metadata.version("searchgen-nb")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
                return tomllib.load(f)["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def __getattr__(name: str) -> str:
    """``__version__``, read when first asked for: a command starts without reading metadata."""
    if name != "__version__":
        raise AttributeError(f"module 'searchgen_nb' has no attribute {name!r}")
    globals()[name] = version = _version()
    return version
