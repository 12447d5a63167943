"""The leaf layer: the document, PDF pages, safe text for reports, hints, temp-file cleanup and the collector's
pause. Imports nothing above it."""
