"""Sync between devices and the central record: push operations, pull changes, resumable blobs.

The protocol is described in docs/sync.md; `sync.views.bp` serves it, `sync.client` speaks it.
"""
