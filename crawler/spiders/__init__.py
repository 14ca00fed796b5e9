"""Spiders of the project."""
