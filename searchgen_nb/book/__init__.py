"""The presentation side: the audit book (views, formatting, tables, charts, page sections, the
offline assets and the Sphinx extension, downloads, the notebooks' run and the release). It
imports the data layer, which never imports it (``tests/test_packaging.py`` checks), and runs no
pipeline stage itself."""
