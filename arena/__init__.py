"""Belote Arena: a referee, tournaments and ratings for Belote and Coinche bots."""

__version__ = "0.1.0"
