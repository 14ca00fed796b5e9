"""Training code of the shipped models: seeded, offline, never imported at crawl time."""
