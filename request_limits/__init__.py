"""What a request may ask for, checked before it runs: its document's shape, its cost, and
its client's budget of points."""
