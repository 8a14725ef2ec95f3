"""mltriage: a local doctor for failed ML training and inference runs."""

__version__ = "0.1.0"
