"""Editions: anchors, manifests, what changed, the root 404, handouts, course packs, publish."""
