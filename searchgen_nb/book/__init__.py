"""The presentation side: the audit book and the release. It imports the data layer, which never
imports it, and runs no pipeline stage itself."""
