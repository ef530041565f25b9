"""Where the tests find the public reference data (see fixtures/reference/README.md).

The one place that names the folder: every test reads it through :data:`FIXTURES`. It lives
in the repository, so a fresh clone and CI have it; a missing file is a test failure.
"""

from __future__ import annotations

from pathlib import Path

#: Published v1.0/v1.1 artifacts, the taxonomy and the public evaluator's result files.
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reference"
