"""The per-site template library (paper 004) and its stores, beside the default database file.

``library`` keeps each site's batch cache, promotes batches into templates and applies them
(the algorithm itself is :mod:`extraction.templates`); ``store`` is the SQLite backend
(``templates.sqlite3`` in this folder by default, TEMPLATES_STORE elsewhere).
"""
