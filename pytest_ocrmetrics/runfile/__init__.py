"""The run file: the document record's home, the run's accumulation, shards, merging and reading run files back."""
