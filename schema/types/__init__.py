"""The object types."""
