"""The process entry point of ``searchgen-nb`` and ``python -m searchgen_nb``: Ctrl-C and SIGTERM
are handled from its first line, so that one arriving while the command's modules still load
ends, as any other, with one line and exit 130 or 143 (data contract, § Publication)."""

import os
import signal
import sys

from searchgen_nb.errors import Terminated


def _terminated(signum, frame):
    raise Terminated()


def main() -> None:
    """Run the command line (:func:`searchgen_nb.cli.main`) as the process: SIGTERM raises
    :class:`Terminated` and SIGINT ``KeyboardInterrupt`` (unless SIGINT is ignored) before the
    command is even imported; one that no command handled is said in one line, exit 130 or
    143; once the command has ended, a late signal changes neither its message nor its exit."""
    # the bootstrap's matrix products on one OpenBLAS thread unless the user says otherwise:
    # on a shared machine its threads wait for each other (data contract, § Bounded work)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        signal.signal(signal.SIGTERM, _terminated)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        from searchgen_nb.cli import main as command

        command()
        code: int | str | None = 0
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt as exc:
        term = isinstance(exc, Terminated)
        step = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].isalpha() else "command"
        why = "terminated (SIGTERM)" if term else "interrupted"
        print(f"searchgen-nb {step}: FAILED: {why}; nothing was written", file=sys.stderr)
        code = 143 if term else 130
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    sys.exit(code)
