"""Reports of how much of a number is the protocol: protocol sensitivity, blind-solvability, CircularEval."""
