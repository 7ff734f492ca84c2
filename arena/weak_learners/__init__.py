"""Online weak learners of the boosting protocol (entry-point group ``arena.weak_learners``).

One module per learner; each is batched over replicates and lanes
(:class:`arena.boosting.components.WeakLearner`).
"""
