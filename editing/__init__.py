"""The write side: validated changes to benchmarks, reads and models, written with revisions."""
