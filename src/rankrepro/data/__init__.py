"""Data sets: the registry of every data set (``registry``), fetching with checksum
verification and quarantine (``fetch``), readers of the official formats (``readers``),
preprocessing to npz (``preprocess``), the synthetic generator (``synthetic``), and the
builders the protocols draw each trial's data from (``builders``; the collaborative-filtering
instances, Yu et al.'s items and kernel, the coactive movie setup)."""
