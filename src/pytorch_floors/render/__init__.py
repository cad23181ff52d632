"""Turning the build's typed results into HTML: gauge, proof frame, citations, headings, listings."""
