"""The presentation side: the audit book.

It reads a staged or published release (``views``), formats numbers (``fmt``), renders HTML
tables (``tables``) and charts (``charts``), composes page sections (``pages``) of display
fragments (``display``), ships the offline JS/CSS (``static/``, vendored by ``assets``) with
the guards that refuse anything loaded from the web (``sphinx_ext``), copies the downloads
(``downloads``), runs the notebooks (``notebooks``) and the release — book, publication
(``release``).

It imports the data layer (``searchgen_nb.config``, ``pipeline``, ``numeric``, …); the data
layer never imports it, and nothing here runs a pipeline stage (a notebook checks with
``pipeline.ensure_staged`` that its data are staged). ``tests/test_packaging.py`` checks the
direction.
"""
