"""Passes that exist for one kind of target device."""
