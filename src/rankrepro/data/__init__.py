"""Data sets: the synthetic generators and (later) the registry of downloaded data."""
