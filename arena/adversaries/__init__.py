"""Built-in adversaries (environments that choose the losses)."""
