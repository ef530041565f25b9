"""The presentation side: the audit book.

It reads a staged or published release (``views``), formats numbers (``fmt``), renders HTML
tables (``tables``) and charts (``charts``), composes page sections (``pages``) of display
fragments (``display``), ships the offline JS/CSS (``static/``, vendored by ``assets``) with a Sphinx extension that refuses
anything loaded from the web (``sphinx_ext``), copies the downloads (``downloads``) and runs
the release — notebooks, book, publication (``release``).

It imports the data layer (``searchgen_nb.config``, ``pipeline``, ``numeric``, …); the data
layer never imports it, and nothing here runs a pipeline stage (a notebook that runs alone
asks ``pipeline.ensure_staged`` for its data). ``tests/test_packaging.py`` checks the direction.
"""
