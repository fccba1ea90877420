"""Releases people can cite: the almanac frozen at a change-log cursor into files that never
change, named by a manifest whose SHA-256 gives the release its id."""

from releases.manifest import Release, ReleaseCounts, ReleaseFile

__all__ = ["Release", "ReleaseCounts", "ReleaseFile"]
