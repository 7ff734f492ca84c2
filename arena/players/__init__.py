"""Built-in players (online learning algorithms), one module per algorithm."""
