"""One document's scores: the per-document scorer, the engine runner that feeds it, and the failure diffs."""
