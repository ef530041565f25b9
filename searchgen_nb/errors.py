"""Error types. Each message names the check, the file and the line / sample_id / model."""


class SearchGenError(Exception):
    """Base class: a problem reported to the user as a one-line message, never a bare traceback."""


class ConfigError(SearchGenError):
    """The release config is missing a key, has a key of the wrong type or an unknown value."""


class MetadataError(SearchGenError):
    """A prompt-metadata line is malformed (names the file, line number and sample_id)."""


class ExtractorError(SearchGenError):
    """The configured extractor cannot be imported or is not callable."""


class ResultIdentityError(SearchGenError):
    """A result file cannot be counted for the pair it was read for: it is shared with another
    pair (symlink, hard link) or its own sample_id / generator_name names another pair."""


class ValidationFailed(SearchGenError):
    """One or more release checks failed (the message names each)."""


class ReleaseError(SearchGenError):
    """A release step failed (names the step); nothing was published."""


class ReleaseInterrupted(SearchGenError):
    """Ctrl-C during a release; the message says whether the new release was published."""


class Terminated(KeyboardInterrupt):
    """SIGTERM: handled as Ctrl-C is (nothing half-written, one line saying what was published)."""
