"""The boosting protocol: boosters, their weak learners, the stepper, the reference loop and the
conformance checks (architecture: the round protocol)."""
