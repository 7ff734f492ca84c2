"""The ``structured`` protocol: string answers with a cost (Shalev-Shwartz 2007, §5.3.3)."""
