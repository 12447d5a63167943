"""The leaf layer: the document, PDF pages, safe text for reports, hints and temp-file cleanup. Imports nothing above it."""
